/**
 * The Provider port: turns one normalized request into one video file.
 * Which provider serves which model is configuration.
 */
import { type NormalizedRequest, RunFailure } from "@refvid/core";
import type { LocalReference } from "../media/local-reference.js";

export interface ProviderJob {
  runId: string;
  request: NormalizedRequest;
  /** The input as submitted, defaults filled in, for providers that pass it through. */
  input: Record<string, unknown>;
  /** A private scratch directory for this run, removed after it ends. */
  workDir: string;
  /** The references, downloaded and checked by the media preflight (empty unless `usesReferences`). */
  references: LocalReference[];
}

export interface ProviderResult {
  /** Path of the finished MP4 inside `workDir`. */
  path: string;
  durationSeconds: number;
}

export interface ProviderContext {
  /** Aborted when the run is cancelled or times out; the provider must stop promptly. */
  signal: AbortSignal;
  /** Reports the fraction done (0 to 1). */
  onProgress(fraction: number): void;
}

export interface Provider {
  /** Whether the provider reads the references; if so the worker downloads and checks them first. */
  readonly usesReferences: boolean;
  run(job: ProviderJob, context: ProviderContext): Promise<ProviderResult>;
}

/** The model could not make this video; the run ends `failed` with type `provider_error`. */
export class ProviderError extends RunFailure {
  constructor(message: string) {
    super("provider_error", message);
  }
}
