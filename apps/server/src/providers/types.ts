/**
 * The Provider port: turns one normalized request into one video file.
 * Which provider serves which model is configuration.
 */
import { type NormalizedRequest, RunFailure } from "@refvid/core";
import type { VendorEventKind } from "@refvid/store";
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../clock.js";
import type { LocalReference } from "../media/local-reference.js";
import type { MinTransferRate } from "../net/rate-floor.js";
import type { InputMapping } from "./upstream/input.js";
import type { CompiledExpression } from "./upstream/mapping.js";

export interface ProviderJob {
  runId: string;
  request: NormalizedRequest;
  /** The input as submitted, defaults filled in, for providers that pass it through. */
  input: Record<string, unknown>;
  /** A private scratch directory for this run, removed after it ends. */
  workDir: string;
  /** The references, downloaded and checked by the media preflight (empty unless `usesReferences`). */
  references: LocalReference[];
  /** The model's longest video: what a `duration` of `auto` may reach. */
  maxDurationSeconds: number;
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
  /** Reports how many jobs are ahead of the run's in the vendor's queue; null once it left the queue. */
  onQueuePosition?(position: number | null): void;
  /** When the run times out (ms since the epoch); a provider's retries stop there. */
  deadline?: number;
  /** The vendor job a previous worker started for this run: resume it, never submit another. */
  upstream?: UpstreamJob | null;
  /** Keeps the vendor job on the run; called once the vendor accepted it, before waiting on it. */
  recordUpstream?(job: UpstreamJob): Promise<void>;
  /** What the vendor side of the run needs beyond that: webhooks, the vendor log, adoption. */
  vendor?: VendorSide;
}

/**
 * A run's vendor webhooks and vendor log, as the worker gives them to an adapter. Webhooks only
 * wake the adapter: what a job's state is, it always asks the vendor's API, so a webhook that
 * lies (forged or replayed) changes nothing.
 */
export interface VendorSide {
  /** Where the vendor posts this run's webhooks; null when vendor webhooks are off. */
  hookUrl: string | null;
  /**
   * Waits `ms`, or less when a verified vendor webhook for the run arrives meanwhile (resolves
   * true then); rejects when `signal` aborts.
   */
  pause(ms: number, signal: AbortSignal): Promise<boolean>;
  /** The vendor job ids that verified webhooks for the run named, oldest first, with the vendor's status word. */
  hooks(): Promise<{ upstreamId: string; status: string | null }[]>;
  /**
   * The body of the latest verified webhook about `upstreamId` with the status word `status`, when
   * it was kept (`readHook` said `keep`: Cog's, the only channel of an async prediction's end).
   */
  hookPayload(upstreamId: string, status: string): Promise<string | null>;
  /** Whether another run recorded this job of the route as its own. */
  heldByAnotherRun(upstreamId: string): Promise<boolean>;
  /** How long to wait between status calls while webhooks are on (the backstop). */
  backstopMs: number;
  /** Adds an entry to the run's vendor log (and counts it in the metrics). */
  log(kind: VendorLogKind, upstreamId: string | null, detail: string | null): Promise<void>;
}

/** What an adapter writes to the run's vendor log (webhooks are written by the receiver). */
export type VendorLogKind = Exclude<VendorEventKind, "hook">;

/**
 * What refvid keeps on a run about the vendor job serving it, so that whichever worker holds the
 * run follows that job to its end.
 */
export interface UpstreamJob {
  /** The provider's name in the routing file. */
  provider: string;
  /** The vendor's id of the job (fal request id, Replicate or Cog prediction id). */
  id: string;
  /** URLs the vendor handed out to follow the job (status, result, cancel), by name. */
  urls: Record<string, string>;
}

export interface Provider {
  /** Whether the provider reads the references; if so the worker downloads and checks them first. */
  readonly usesReferences: boolean;
  run(job: ProviderJob, context: ProviderContext): Promise<ProviderResult>;
  /**
   * Cancels a vendor job recorded on a run that no worker follows (its worker died and the
   * sweeper ended the run): one try, never throwing; the job may have ended already.
   */
  cancelUpstream?(job: UpstreamJob): Promise<void>;
  /**
   * Reads a webhook the vendor posted about one of this route's jobs, after checking it is the
   * vendor's (its signature): the job it names, the vendor's status word, and whether its body is
   * to be kept. Throws `HookRefused` for one that does not verify.
   */
  readHook?(hook: VendorHook): Promise<{ upstreamId: string; status: string | null; keep?: boolean }>;
  /** The largest webhook body this provider's vendor posts (1 MiB unless it says more). */
  readonly hookBodyLimit?: number;
}

/** A vendor webhook as received: its headers (lower-case names) and its body's bytes. */
export interface VendorHook {
  headers: Record<string, string | undefined>;
  body: Buffer;
}

/** A vendor webhook that did not verify (bad or missing signature, stale timestamp, unreadable body). */
export class HookRefused extends Error {}

/** What every vendor adapter is built with, from its route in the routing file. */
export interface VendorProviderOptions {
  /** The provider's name in the routing file; kept with the vendor job on the run. */
  name: string;
  /** The credential; null sends none. Never logged, and scrubbed from every message. */
  token: string | null;
  /** The route's input shaping (renames, fixed fields, only/omit, numbers). */
  mapping?: InputMapping;
  /** The route's output path (JSONata): where the video's URL is in the vendor's output. */
  output?: CompiledExpression;
  /** REFVID_ALLOW_LOCAL_URLS: accept an output video on a loopback or private host. */
  allowLocalOutputs: boolean;
  /** REFVID_MIN_DOWNLOAD_BYTES_PER_S over its window: the output video downloads at least this fast. */
  minDownloadRate?: MinTransferRate | null;
  scheduler: Scheduler;
  clock: Clock;
  /** Wait between status calls (probes for Cog); 1000 ms by default. */
  pollMs?: number;
  /**
   * The longest wait for the webhook of a job whose create answer was lost (fal, which has no
   * list to look it up in); the wait is shorter once the route's jobs have shown how long they take.
   */
  adoptWindowMs?: number;
  logger?: Logger;
}

/**
 * An abort reason meaning "stop following the vendor job, but leave it running": the run goes on
 * elsewhere (this worker shuts down, or another worker took the run over and resumes the job).
 * Any other abort (cancel, timeout) cancels the vendor job too.
 */
export class LeaveUpstreamRunning extends Error {}

/** The route's provider has no free slot: the run goes back to the queue to wait for one. */
export class ProviderFull extends Error {
  constructor(readonly provider: string) {
    super(`provider ${provider} is full`);
  }
}

/** The model could not make this video; the run ends `failed` with type `provider_error`. */
export class ProviderError extends RunFailure {
  constructor(message: string) {
    super("provider_error", message);
  }
}
