/**
 * The Store port: every read and write of refvid's state, shaped so that each operation the
 * interface needs to be atomic is ONE call. `MemoryStore` and
 * `PostgresStore` implement it, and both run the contract suite in `./contract`.
 *
 * Times are passed in (`now`), never read from a clock here, so tests control them.
 */
import type {
  AdmissionDecision,
  EarlierRequestDecision,
  Environment,
  Micros,
  ModelSlug,
  PriceUnit,
  RunError,
  RunStatus,
  UploadQuotaDecision,
  WebhookSubscription,
} from "@refvid/core";

export type { Environment };

/** The stored output of a succeeded run; URLs are signed when the run is read. */
export interface RunOutputFile {
  fileId: string;
  fileName: string;
  contentType: string;
  durationSeconds: number;
  /** The poster frame (a JPEG blob), when it was rendered and stored (docs/decisions.md). */
  thumbnailFileId?: string;
  /** The sprite sheet of evenly spaced frames (a JPEG blob), likewise. */
  spritesheetFileId?: string;
}

/** Why a run did not succeed: core's closed set of run errors, as stored. */
export type RunErrorRecord = RunError;

export interface RunRecord {
  id: string;
  organizationId: string;
  apiKeyId: string;
  /** The environment of the key that made it: only keys of this environment see it. */
  environment: Environment;
  endpoint: ModelSlug;
  /** The input as submitted, with the model's defaults filled in. */
  input: Record<string, unknown>;
  status: RunStatus;
  webhookUrl: string | null;
  /** The events its webhook gets (`webhook_events`): `["completed"]` unless the client asked for more. */
  webhookEvents: WebhookSubscription[];
  metadata: Record<string, string>;
  /**
   * The price ceiling, held from the wallet while a live run is in flight: unitPrice x
   * reservedSeconds per second, unitPrice per run.
   */
  reserved: Micros;
  /** How `unitPrice` counts, fixed at admission: per second of output, or once for the run. */
  priceUnit: PriceUnit;
  unitPrice: Micros;
  reservedSeconds: number;
  /** Set once terminal: the charge (0 unless succeeded; a test run's is never taken) and the seconds billed. */
  charged: Micros | null;
  billableSeconds: number | null;
  output: RunOutputFile | null;
  error: RunErrorRecord | null;
  progress: number | null;
  /**
   * While a vendor holds the run's job in its queue: how many jobs are ahead of it, as the vendor
   * said (absent or null otherwise).
   */
  queuePosition?: number | null;
  /** The submitting key's `PRIORITY_RANK`, fixed at admission: orders its organization's queue. */
  priority: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  /** Worker holding the run while processing, and until when. */
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  /** Times a worker claimed the run (a lost lease puts it back in the queue). */
  attempts: number;
  /** The vendor job serving the run, once a vendor accepted it: a worker taking the run over resumes it. */
  upstream: UpstreamRecord | null;
  /** The provider whose slot the run takes while processing (`acquireProvider`). */
  provider: string | null;
  /** The catalog route that served the run (unique within its model), as its end reported it. */
  route: string | null;
  /** What the vendor charged for the run, as a success reported it (`settleRun`); null otherwise. */
  vendorCost: Micros | null;
  /** A run made on the `/v1/videos` surface; absent or null for any other. */
  video?: VideoRecord | null;
}

/** A vendor job, as kept on its run. */
export interface UpstreamRecord {
  /** The provider's name in the routing file. */
  provider: string;
  /** The vendor's id of the job. */
  id: string;
  /** URLs the vendor handed out to follow the job, by name. */
  urls: Record<string, string>;
}

export interface NewRun {
  id: string;
  organizationId: string;
  apiKeyId: string;
  endpoint: ModelSlug;
  input: Record<string, unknown>;
  webhookUrl: string | null;
  /** The events its webhook gets; absent, the terminal one only (`DEFAULT_WEBHOOK_EVENTS`). */
  webhookEvents?: readonly WebhookSubscription[];
  metadata: Record<string, string>;
  /** How `unitPrice` counts: per second of output, or once for the run. */
  priceUnit: PriceUnit;
  unitPrice: Micros;
  reservedSeconds: number;
  /** What admission reserves: unitPrice x reservedSeconds per second, unitPrice per run. */
  reserved: Micros;
  createdAt: Date;
  /** Set for a run made on the `/v1/videos` surface: what the client asked, in its terms. */
  video?: NewVideo;
}

/** What a run made on the `/v1/videos` surface keeps in that surface's terms. */
export interface NewVideo {
  /** The model as the client named it: a catalog slug or an operator's alias. */
  model: string;
  /** The length asked for, as the surface writes it (`"8"`). */
  seconds: string;
  /** The frame size asked for (`"1280x720"`), or the model's own when none was. */
  size: string;
  /** The video whose references and model this one reused with a new prompt. */
  remixedFrom: string | null;
}

export interface VideoRecord extends NewVideo {
  /** When its `DELETE /v1/videos/{id}` removed it from that surface (the run stays). */
  deletedAt: Date | null;
}

export interface IdempotencyRequest {
  key: string;
  /** Hash of everything that makes two requests "the same": endpoint and body. */
  requestHash: string;
  expiresAt: Date;
  /**
   * The response a replay returns, stored with the admission: an async submit's answer is the run as
   * admitted, known before the transaction. Absent for a sync submit: its answer is the run's end,
   * stored later by `completeIdempotency`, and until then a retry follows the same run (`pending`).
   */
  response?: IdempotencyResponse;
}

/** A stored answer to replay: the status and body of the first response. */
export interface IdempotencyResponse {
  status: number;
  body: unknown;
}

export type AdmitResult =
  | { kind: "admitted"; run: RunRecord; concurrencyRemaining: number }
  | { kind: "rejected"; decision: Exclude<AdmissionDecision, { ok: true }> }
  | { kind: "api_key_gone" }
  /** The Idempotency-Key was used before: core's decision, `replay`, `pending` or `mismatch`. */
  | { kind: "idempotency"; decision: EarlierRequestDecision };

/** How a run ended; `route` names the catalog route that served it, kept on the run as it is. */
export type RunOutcome =
  | {
      status: "succeeded";
      output: RunOutputFile;
      billableSeconds: number;
      charged: Micros;
      route?: string;
      /** What the vendor charges for the run; a run that did not succeed records none. */
      vendorCost?: Micros;
    }
  | { status: "failed" | "timeout" | "cancelled"; error: RunErrorRecord; route?: string };

export type CompleteResult =
  | { kind: "completed"; run: RunRecord }
  /** The run had already ended: nothing changed (a run ends exactly once). */
  | { kind: "already_terminal"; run: RunRecord }
  /** `leaseOwner` was given and no longer holds the run (requeued or taken by another worker). */
  | { kind: "lease_lost"; run: RunRecord }
  | { kind: "not_found" };

export interface RunSearch {
  organizationId: string;
  /** Runs of one environment only: the two are separate worlds. */
  environment: Environment;
  statuses?: RunStatus[];
  endpoint?: ModelSlug;
  createdAfter?: Date;
  createdBefore?: Date;
  metadata?: Record<string, string>;
  /** Runs made with this key only. */
  apiKeyId?: string;
  limit: number;
  /** Keyset position: return runs strictly older than this (createdAt, id), or newer when `oldestFirst`. */
  after?: Keyset;
  /** Oldest first instead of newest first. */
  oldestFirst?: boolean;
  /** Only runs made on the `/v1/videos` surface and not deleted there. */
  videos?: boolean;
}

/** A keyset position in a newest-first list: return rows strictly older than this (createdAt, id). */
export interface Keyset {
  createdAt: Date;
  id: string;
}

export type StoreEvent =
  | { kind: "queued" }
  | { kind: "ended"; runId: string }
  /** Runs a worker started, or whose progress moved: live event streams send them on. */
  | { kind: "changed"; runIds: string[] }
  /** A vendor webhook for the run verified: its worker looks at the vendor job now. */
  | { kind: "vendor"; runId: string }
  /**
   * The subscription itself: "reconnecting" once its connection is lost (events are missed
   * until it is back), "ok" once it listens again; then re-check whatever may have been missed.
   */
  | { kind: "subscription"; state: ListenHealth };

export type ListenHealth = "ok" | "reconnecting";

/**
 * How a store call fails when it lost its database connection, or could not get one: an Error
 * with this `code`. The store recovers by itself; the call may be retried. `committed` is
 * "unknown" when a write or a commit was cut off (it may have happened), false when nothing was
 * written.
 */
export interface StoreConnectionLost extends Error {
  code: "store_connection_lost";
  committed: false | "unknown";
}

/** The whole service at a glance, across organizations and environments (`serviceStats`, for metrics). */
export interface ServiceStats {
  /** Runs waiting in the queue. */
  queuedRuns: number;
  /** When the longest-waiting queued run was admitted; null when the queue is empty. */
  oldestQueuedAt: Date | null;
  /** Runs a worker holds. */
  processingRuns: number;
  /** Webhook deliveries neither delivered nor given up: due now or waiting for a retry. */
  pendingWebhooks: number;
  /** What admitted runs hold in every organization's wallet (live runs; test runs hold nothing). */
  reserved: Micros;
}

export type * from "./account-types.js";
export type * from "./admin-types.js";
export type * from "./ledger-types.js";
export type * from "./ports.js";
export type * from "./queue-types.js";
export type * from "./vendor-types.js";
export type * from "./webhook-types.js";

/** A reference file a client uploaded (`POST /v1/files`); its bytes are in the blob store under `id`. */
export interface UploadRecord {
  /** `upload_…` */
  id: string;
  organizationId: string;
  apiKeyId: string;
  /** The environment of the key that uploaded it: only keys of that environment may use it. */
  environment: Environment;
  contentType: string;
  bytes: number;
  /** The name the client gave, if any. */
  fileName: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/** Recording an upload: kept, or refused because it would pass its organization's quota (nothing kept). */
export type CreateUploadResult =
  | { kind: "created"; upload: UploadRecord }
  | { kind: "over_quota"; decision: Exclude<UploadQuotaDecision, { ok: true }> }
  | { kind: "organization_gone" };
