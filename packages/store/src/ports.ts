/**
 * The Store port, one interface per concern, combined into `Store`: every adapter implements all of
 * them and runs the contract suite (`@refvid/store/testing`). Records and results are in types.ts.
 */
import type {
  Environment,
  KeyBudget,
  KeyPriority,
  ModelSlug,
  RateDecision,
  UploadQuota,
  UploadUsage,
} from "@refvid/core";
import type { LedgerStore, TopUpInput, TopUpResult } from "./ledger-types.js";
import type { QueueStore } from "./queue-types.js";
import type {
  AdminRunSearch,
  AdmitResult,
  ApiKeyPatch,
  ApiKeyRecord,
  ApiKeySearch,
  CompleteResult,
  CreateUploadResult,
  IdempotencyRequest,
  IdempotencyResponse,
  NewRun,
  OrganizationPatch,
  OrganizationRecord,
  OrganizationSearch,
  RunOutcome,
  RunRecord,
  RunSearch,
  ServiceStats,
  StoreEvent,
  TopUpRecord,
  TopUpSearch,
  UploadRecord,
  UpstreamRecord,
  UsageQuery,
  UsageRow,
  WebhookAttemptResult,
  WebhookDelivery,
  WebhookDeliveryLog,
  WebhookDeliverySearch,
} from "./types.js";
import type { VendorLogStore } from "./vendor-types.js";

/** Organizations, their keys and wallets (the admin API and authentication). */
export interface AccountStore {
  createOrganization(input: {
    id: string;
    name: string;
    /** Each environment's first webhook secret; the two differ. */
    webhookSecrets: Record<Environment, string>;
    now: Date;
  }): Promise<OrganizationRecord>;
  getOrganization(id: string): Promise<OrganizationRecord | null>;
  /**
   * Changes an organization's settings (its upload quota, its queue weight); null when there is no
   * such organization.
   */
  updateOrganization(id: string, patch: OrganizationPatch): Promise<OrganizationRecord | null>;
  createApiKey(
    input: Omit<
      ApiKeyRecord,
      "inFlight" | "revokedAt" | "createdAt" | "priority" | "budget" | "spend" | "budgetAlert"
    > & {
      priority?: KeyPriority;
      budget?: KeyBudget | null;
      now: Date;
    },
  ): Promise<ApiKeyRecord | null>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  updateApiKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | null>;
  revokeApiKey(id: string, now: Date): Promise<ApiKeyRecord | null>;
  /**
   * Adds money under the organization's row lock, where the lifetime cap is checked
   * (`decideTopUp`), with its ledger entry (and audit entry, given an actor); once per
   * Idempotency-Key. Null when there is no such organization.
   */
  addTopUp(input: TopUpInput): Promise<TopUpResult | null>;
  /** The key with this hash and its organization, for authentication; revoked keys included. */
  findApiKeyByHash(
    keyHash: string,
  ): Promise<{ apiKey: ApiKeyRecord; organization: OrganizationRecord } | null>;
  /**
   * Makes `secret` the webhook secret of the organization's `environment`; the one it replaces
   * becomes that environment's previous secret until `previousExpiresAt` (an earlier previous one
   * is dropped). The other environment's secrets stay as they are. Null when there is no such
   * organization.
   */
  rotateWebhookSecret(input: {
    organizationId: string;
    environment: Environment;
    secret: string;
    previousExpiresAt: Date;
  }): Promise<OrganizationRecord | null>;
}

/** The per-key rate limit. */
export interface RateLimitStore {
  /** Counts one request of a key against its per-minute window, atomically across processes. */
  countRequest(apiKeyId: string, limit: number, now: Date): Promise<RateDecision>;
}

/** Admitting a run, with its idempotency record. */
export interface AdmissionStore {
  /**
   * Admission, atomically: idempotency record, the key's cap, the organization's cap, the
   * balance, the reservation and the queued run succeed or fail together.
   */
  admitRun(input: { run: NewRun; idempotency?: IdempotencyRequest; now: Date }): Promise<AdmitResult>;
  /**
   * Stores the response of a sync submit once its run has ended, so a replay returns it (an async
   * submit's is stored with its admission); a record that has its response already keeps it.
   */
  completeIdempotency(organizationId: string, key: string, response: IdempotencyResponse): Promise<void>;
  /** Whether an earlier request of the organization holds `key` unexpired: this one is its retry. */
  hasIdempotencyKey(organizationId: string, key: string, now: Date): Promise<boolean>;
}

/** Runs from admission to their end: reads, leases, progress and the one terminal transition. */
export interface RunStore {
  getRun(organizationId: string, runId: string): Promise<RunRecord | null>;
  searchRuns(search: RunSearch): Promise<RunRecord[]>;
  /**
   * Removes a video (a run made on the `/v1/videos` surface) from that surface: it leaves its
   * lists and reads there, and stays a run, billed, in the run API. The record as it is then; null
   * when the organization has no such video. Deleting a deleted video changes nothing.
   */
  deleteVideo(organizationId: string, runId: string, now: Date): Promise<RunRecord | null>;

  /**
   * Moves up to `limit` queued runs, oldest first, to processing under a lease; runs of
   * `skipEndpoints` (whose provider is full) stay queued, and so do the runs of
   * `skipDownloads.organizationIds` for `skipDownloads.endpoints` (models whose references the
   * worker would download, for organizations that hold their share of its download slots).
   * Queues the `run.started` event of a run whose webhook asked for it, on its first claim only.
   */
  claimRuns(input: {
    workerId: string;
    limit: number;
    leaseMs: number;
    now: Date;
    skipEndpoints?: readonly ModelSlug[];
    skipDownloads?: { organizationIds: readonly string[]; endpoints: readonly ModelSlug[] };
  }): Promise<RunRecord[]>;
  /**
   * Takes one of `provider`'s slots for a run this worker holds, atomically across processes:
   * false when `limit` other runs already hold one (or the lease is gone). No limit: always taken.
   */
  acquireProvider(input: {
    runId: string;
    workerId: string;
    provider: string;
    limit?: number;
  }): Promise<boolean>;
  /** Gives a claimed run back to the queue as it was (its provider was full): the claim is undone. */
  releaseRun(input: { runId: string; workerId: string }): Promise<boolean>;
  /** Extends a lease; false when the run is no longer this worker's (it ended or was reclaimed). */
  renewLease(input: { runId: string; workerId: string; leaseMs: number; now: Date }): Promise<boolean>;
  /**
   * Sets a processing run's progress, and queues a `run.progress` event when its webhook asked for
   * them (merged into the run's progress event not yet sent, if there is one).
   */
  setProgress(runId: string, progress: number, now: Date): Promise<void>;
  /**
   * Where a processing run's job stands in its vendor's queue (null: out of it, or not said); a
   * change raises a `run.progress` event as `setProgress` does.
   */
  setQueuePosition(runId: string, position: number | null, now: Date): Promise<void>;
  /**
   * Keeps the vendor job serving a run, before the worker waits on it; false (and nothing kept)
   * when the worker no longer holds the run's lease.
   */
  recordUpstream(input: { runId: string; workerId: string; upstream: UpstreamRecord }): Promise<boolean>;
  /**
   * Ends an in-flight run, exactly once: settles billing, releases the reservation, frees both
   * concurrency slots, and enqueues the terminal webhook event when the run's webhook asked for it
   * (the default), dropping its progress event not yet sent: the terminal event carries the end.
   */
  completeRun(input: {
    runId: string;
    outcome: RunOutcome;
    now: Date;
    /** Only a run of this organization (cancel). */
    organizationId?: string;
    /** Only a run of this environment (cancel): the caller's key's. */
    environment?: Environment;
    /** Only while this worker holds the run's lease (a worker finishing its own run). */
    leaseOwner?: string;
  }): Promise<CompleteResult>;
  /** In-flight runs created before `createdBefore` (they have run out of time). */
  findOverdueRuns(input: { createdBefore: Date; limit: number }): Promise<RunRecord[]>;
  /**
   * Processing runs whose lease expired (their worker died): back to `queued`, or, after
   * `maxAttempts` claims, returned for the caller to end as failed.
   */
  requeueExpiredLeases(input: {
    now: Date;
    maxAttempts: number;
    limit: number;
  }): Promise<{ requeued: string[]; exhausted: RunRecord[] }>;
}

/** The webhook outbox, written with the run changes that raise events, and its delivery log. */
export interface OutboxStore {
  /**
   * Due deliveries, each leased for `leaseMs`, oldest due first: of a run's deliveries only those
   * whose earlier ones have all had a first attempt, and a progress event only once a second has
   * passed since the first attempt of the run's last one ended.
   */
  claimWebhookDeliveries(input: { now: Date; limit: number; leaseMs: number }): Promise<WebhookDelivery[]>;
  /** Counts and logs one attempt of a pending delivery; nothing when it is no longer pending. */
  recordWebhookAttempt(id: string, result: WebhookAttemptResult): Promise<void>;
  /** A run's deliveries in the order they were queued. */
  listWebhookDeliveries(runId: string): Promise<WebhookDelivery[]>;
  /** The log: one organization's deliveries of one environment, newest first by `(createdAt, id)`. */
  searchWebhookDeliveries(search: WebhookDeliverySearch): Promise<WebhookDeliveryLog[]>;
  /** A delivery of the organization (of either environment), or null. */
  getWebhookDelivery(organizationId: string, id: string): Promise<WebhookDeliveryLog | null>;
  /**
   * Queues one more attempt, due at `now`: a delivered or failed delivery becomes pending for one
   * attempt (`redelivery`); a pending one is just due now. Null when the organization has no such
   * delivery in `environment`.
   */
  redeliverWebhook(input: {
    organizationId: string;
    environment: Environment;
    id: string;
    now: Date;
  }): Promise<WebhookDeliveryLog | null>;
}

/**
 * The operators' reads across organizations (the admin API). Lists are newest first by
 * `(createdAt, id)`, paged by keyset; usage is added up by the store, never by loading runs.
 */
export interface AdminStore {
  listOrganizations(search: OrganizationSearch): Promise<OrganizationRecord[]>;
  listApiKeys(search: ApiKeySearch): Promise<ApiKeyRecord[]>;
  listTopUps(search: TopUpSearch): Promise<TopUpRecord[]>;
  searchAllRuns(search: AdminRunSearch): Promise<RunRecord[]>;
  /** One row per group and environment that had runs created in the window, ordered by group, then environment. */
  usage(query: UsageQuery): Promise<UsageRow[]>;
}

/** Cheap reads of the whole service for operators' metrics, made at each scrape. */
export interface StatsStore {
  /** Counts from indexes and per-organization counters: never a scan of run history. */
  serviceStats(): Promise<ServiceStats>;
}

/** Reference uploads: who owns each and until when (the bytes are in the blob store). */
export interface UploadStore {
  /**
   * Records an upload once its bytes are stored, if it fits its organization's upload quota (its
   * own, else `defaults`) beside the uploads it keeps unexpired at `record.createdAt`: decided by
   * core's `decideUpload` under the organization's lock, so racing uploads cannot pass it together.
   */
  createUpload(record: UploadRecord, defaults: UploadQuota): Promise<CreateUploadResult>;
  /**
   * What the organization's uploads unexpired at `now` take (both environments), and the quota in
   * force (its own, else `defaults`); null when there is no such organization.
   */
  uploadUsage(input: {
    organizationId: string;
    defaults: UploadQuota;
    now: Date;
  }): Promise<{ usage: UploadUsage; quota: UploadQuota } | null>;
  /**
   * The upload, only for its own organization and environment (null for anyone else's, and for
   * an unknown id); an expired one too: callers decide what expiry means.
   */
  getUpload(input: {
    organizationId: string;
    environment: Environment;
    id: string;
  }): Promise<UploadRecord | null>;
  /** Forgets an upload of this organization and environment early; false when there was none. */
  deleteUpload(input: { organizationId: string; environment: Environment; id: string }): Promise<boolean>;
  /** Forgets uploads that expired at or before `now`; returns their ids (their bytes go next). */
  deleteExpiredUploads(now: Date): Promise<string[]>;
}

/** Every concern of the store in one port, as each adapter implements it. */
export interface Store
  extends AccountStore,
    RateLimitStore,
    AdmissionStore,
    RunStore,
    OutboxStore,
    AdminStore,
    StatsStore,
    UploadStore,
    QueueStore,
    VendorLogStore,
    LedgerStore {
  /**
   * Calls `listener` once for each run queued (`queued`), started or moved on (`changed`) or ended
   * (`ended`), by this store right after the change and, on a shared database, by any other process;
   * and with the state of the cross-process subscription itself (`subscription`). The store is the
   * one source of these events (docs/architecture.md, "Run events").
   */
  subscribe(listener: (event: StoreEvent) => void): Promise<() => Promise<void>>;

  /** Whether the store answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
