/** What the parts of the Cog protocol server (cog-server.ts) share. */
import type { CogKnobs, CogServerOptions, CogStats, Prediction } from "./cog-protocol.js";
import type { InputCheck } from "./input-schema.js";

/** An output served by the server (`outputAs: "url"`): a file, or bytes that are not a video. */
export type CogUpload = { path: string } | { bytes: Buffer };

/** What the server's parts share. */
export interface CogContext {
  readonly knobs: CogKnobs;
  readonly stats: CogStats;
  readonly options: CogServerOptions;
  /** The model's `Input` (unless `inputSchema` replaces it). */
  readonly schema: NonNullable<CogServerOptions["input"]>;
  /** The model's input check, when its JSON Schema was given. */
  readonly checkInput: InputCheck | null;
  /** The predictions in flight, by id (or an anonymous key). */
  readonly inFlight: Map<string, Prediction>;
  readonly uploads: Map<string, CogUpload>;
  /** When the model's setup started, and ended (null while it runs). */
  readonly setup: { startedAt: Date; doneAt: Date | null };
  /** Aborted when the server closes. */
  readonly closing: AbortSignal;
  /** A timer cleared when the server closes. */
  later(fn: () => void, ms: number): NodeJS.Timeout;
  sleep(ms: number): Promise<void>;
  /** The FastAPI server of Cog ≤ 0.16 (either python flavor), not coglet. */
  isPython(): boolean;
  /** The next number of the server's sequence (ids, uploads). */
  next(): number;
  /** The server's base URL (known once it listens). */
  base(): string;
}
