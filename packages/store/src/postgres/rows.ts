/** Rows to records. Both drivers may hand back bigint columns as strings or bigints. */
import type {
  BalanceThreshold,
  BudgetPeriod,
  Environment,
  IdempotencyRecord,
  KeyPriority,
  LedgerKind,
  ModelSlug,
  PeriodSpend,
  PriceUnit,
  RunStatus,
  Tier,
  UploadQuotaOverride,
} from "@refvid/core";
import type {
  ApiKeyRecord,
  AuditEntryRecord,
  LedgerEntryRecord,
  OrganizationRecord,
  RunRecord,
  TopUpRecord,
  UploadRecord,
  WebhookAttempt,
  WebhookDelivery,
  WebhookDeliveryLog,
  WebhookSigningSecret,
} from "../types.js";

export type Row = Record<string, unknown>;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
/**
 * A bigint money column, exact: a value past 2^53 would round silently as a JavaScript number, so it
 * is an error naming the column instead. The lifetime top-up cap keeps real values far below it.
 */
export function micros(v: unknown, column: string): number {
  return exactInt(v, column, " micro-USD");
}
/** A bigint column as a number, or an error naming the column if it is past 2^53. */
function exactInt(v: unknown, column: string, unit = ""): number {
  const n = v === null || v === undefined ? 0 : Number(v);
  if (!Number.isSafeInteger(n))
    throw new RangeError(`${column} holds ${String(v)}${unit}, past the exact range`);
  return n;
}
const microsOrNull = (v: unknown, column: string): number | null =>
  v === null || v === undefined ? null : micros(v, column);
/** The run's price unit; the column's CHECK allows only these two. */
function priceUnit(v: unknown): PriceUnit {
  if (v === "second" || v === "run") return v;
  throw new RangeError(`price_unit holds ${String(v)}, not second or run`);
}
const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));

export function toOrganization(r: Row): OrganizationRecord {
  return {
    id: String(r.id),
    name: String(r.name),
    createdAt: date(r.created_at),
    balance: micros(r.balance, "balance"),
    reserved: micros(r.reserved, "reserved"),
    totalSpent: micros(r.total_spent, "total_spent"),
    lifetimeTopUps: micros(r.lifetime_top_ups, "lifetime_top_ups"),
    tier: r.tier as Tier,
    concurrencyLimit: num(r.concurrency_limit),
    inFlight: num(r.in_flight),
    testInFlight: num(r.test_in_flight),
    // The columns without a prefix are the live world's, as `in_flight` is (migration 000016).
    webhookSecrets: {
      live: signingSecret(r.webhook_secret, r.previous_webhook_secret, r.previous_webhook_secret_expires_at),
      test: signingSecret(
        r.test_webhook_secret,
        r.previous_test_webhook_secret,
        r.previous_test_webhook_secret_expires_at,
      ),
    },
    uploadQuota: toUploadQuota(r),
    queueWeight: r.queue_weight === undefined ? 1 : num(r.queue_weight),
    alerts: {
      webhookUrl: (r.alert_webhook_url as string | null | undefined) ?? null,
      thresholds: (r.balance_alert_thresholds as BalanceThreshold[] | null | undefined) ?? null,
      lastTopUp: micros(r.last_top_up, "last_top_up"),
      fired: ((r.balance_alerts_fired as number[] | undefined) ?? []).map(Number),
    },
    videoWebhookUrl: (r.video_webhook_url as string | null | undefined) ?? null,
  };
}

/** An organization's own upload quota, from its `upload_quota_*` columns. */
export function toUploadQuota(r: Row): UploadQuotaOverride {
  return {
    bytes:
      r.upload_quota_bytes === null || r.upload_quota_bytes === undefined
        ? null
        : exactInt(r.upload_quota_bytes, "upload_quota_bytes"),
    count: numOrNull(r.upload_quota_count),
  };
}

function signingSecret(secret: unknown, previous: unknown, expiresAt: unknown): WebhookSigningSecret {
  return {
    secret: String(secret),
    previous:
      previous === null || previous === undefined
        ? null
        : { secret: String(previous), expiresAt: date(expiresAt) },
  };
}

export function toApiKey(r: Row): ApiKeyRecord {
  return {
    id: String(r.id),
    organizationId: String(r.organization_id),
    name: (r.name as string | null) ?? null,
    environment: r.environment as Environment,
    keyHash: String(r.key_hash),
    keyPrefix: String(r.key_prefix),
    maxConcurrency: num(r.max_concurrency),
    rateLimitPerMinute: num(r.rate_limit_per_minute),
    priority: (r.priority as KeyPriority | undefined) ?? "normal",
    inFlight: num(r.in_flight),
    budget:
      r.budget === null || r.budget === undefined
        ? null
        : { amount: micros(r.budget, "budget"), period: r.budget_period as BudgetPeriod },
    spend: {
      day: periodSpend(r.spent_day, r.spent_day_start, "spent_day"),
      week: periodSpend(r.spent_week, r.spent_week_start, "spent_week"),
      month: periodSpend(r.spent_month, r.spent_month_start, "spent_month"),
      reserved: micros(r.budget_reserved, "budget_reserved"),
    },
    budgetAlert: {
      level: num(r.budget_alert_level) as 0 | 80 | 100,
      periodStart: dateOrNull(r.budget_alert_period_start),
    },
    createdAt: date(r.created_at),
    revokedAt: dateOrNull(r.revoked_at),
  };
}

const periodSpend = (spent: unknown, start: unknown, column: string): PeriodSpend | null =>
  start === null || start === undefined ? null : { start: date(start), spent: micros(spent, column) };

export function toTopUp(r: Row): TopUpRecord {
  return {
    id: String(r.id),
    organizationId: String(r.organization_id),
    amount: micros(r.amount, "amount"),
    note: (r.note as string | null) ?? null,
    createdAt: date(r.created_at),
    actor: (r.actor as string | null) ?? null,
    reversedAt: dateOrNull(r.reversed_at),
  };
}

export function toLedgerEntry(r: Row): LedgerEntryRecord {
  return {
    id: String(r.id),
    organizationId: String(r.organization_id),
    kind: r.kind as LedgerKind,
    amount: micros(r.amount, "amount"),
    balance: micros(r.balance, "balance"),
    reserved: micros(r.reserved, "reserved"),
    runId: (r.run_id as string | null) ?? null,
    apiKeyId: (r.api_key_id as string | null) ?? null,
    topUpId: (r.top_up_id as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    actor: (r.actor as string | null) ?? null,
    createdAt: date(r.created_at),
  };
}

export function toAuditEntry(r: Row): AuditEntryRecord {
  return {
    id: String(r.id),
    actor: String(r.actor),
    action: String(r.action),
    organizationId: (r.organization_id as string | null) ?? null,
    targetId: (r.target_id as string | null) ?? null,
    detail: (r.detail as Record<string, unknown>) ?? {},
    requestId: String(r.request_id),
    createdAt: date(r.created_at),
  };
}

export function toRun(r: Row): RunRecord {
  const run: RunRecord = {
    id: String(r.id),
    organizationId: String(r.organization_id),
    apiKeyId: String(r.api_key_id),
    environment: r.environment as Environment,
    endpoint: r.endpoint as ModelSlug,
    input: r.input as Record<string, unknown>,
    status: r.status as RunStatus,
    webhookUrl: (r.webhook_url as string | null) ?? null,
    webhookEvents: r.webhook_events as RunRecord["webhookEvents"],
    metadata: (r.metadata as Record<string, string>) ?? {},
    reserved: micros(r.reserved, "reserved"),
    priceUnit: priceUnit(r.price_unit),
    unitPrice: micros(r.unit_price, "unit_price"),
    reservedSeconds: num(r.reserved_seconds),
    charged: microsOrNull(r.charged, "charged"),
    billableSeconds: numOrNull(r.billable_seconds),
    output: (r.output as RunRecord["output"]) ?? null,
    error: (r.error as RunRecord["error"]) ?? null,
    progress: numOrNull(r.progress),
    queuePosition: numOrNull(r.queue_position),
    priority: r.priority === undefined ? 0 : num(r.priority),
    createdAt: date(r.created_at),
    startedAt: dateOrNull(r.started_at),
    completedAt: dateOrNull(r.completed_at),
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseExpiresAt: dateOrNull(r.lease_expires_at),
    attempts: num(r.attempts),
    upstream: (r.upstream as RunRecord["upstream"]) ?? null,
    provider: (r.provider as string | null) ?? null,
    route: (r.route as string | null) ?? null,
    vendorCost: microsOrNull(r.vendor_cost, "vendor_cost"),
  };
  if (r.video) {
    const video = r.video as { model: string; seconds: string; size: string; remixed_from: string | null };
    run.video = {
      model: video.model,
      seconds: video.seconds,
      size: video.size,
      remixedFrom: video.remixed_from,
      deletedAt: dateOrNull(r.video_deleted_at),
    };
  }
  return run;
}

/**
 * `convert()`, or the error it throws (a value past the exact range, say): in a batched read one
 * bad row fails the request that asked for it, not every request of its batch.
 */
export function orError<T>(convert: () => T): T | Error {
  try {
    return convert();
  } catch (err) {
    return asError(err);
  }
}

/** `err` as an Error: what a DataLoader batch hands a request that failed. */
export const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

export function toDelivery(r: Row): WebhookDelivery {
  return {
    id: String(r.id),
    runId: (r.run_id as string | null) ?? null,
    organizationId: String(r.organization_id),
    environment: r.environment as Environment,
    createdAt: date(r.created_at),
    url: String(r.url),
    eventType: r.event_type as WebhookDelivery["eventType"],
    runState:
      r.state_at === null || r.state_at === undefined
        ? null
        : {
            at: date(r.state_at),
            progress: numOrNull(r.state_progress),
            queuePosition: numOrNull(r.state_queue_position),
          },
    payload: (r.payload as string | null) ?? null,
    attempts: num(r.attempts),
    nextAttemptAt: date(r.next_attempt_at),
    state: r.state as WebhookDelivery["state"],
    lastError: (r.last_error as string | null) ?? null,
    deliveredAt: dateOrNull(r.delivered_at),
    redelivery: r.redelivery === true,
  };
}

/** A delivery with its `history`: the JSON array `DELIVERY_HISTORY` selects. */
export function toDeliveryLog(r: Row): WebhookDeliveryLog {
  const history = ((r.history as Row[] | null) ?? []).map(
    (a): WebhookAttempt => ({
      at: date(a.at),
      status: numOrNull(a.status),
      error: (a.error as string | null) ?? null,
      durationMs: num(a.duration_ms),
    }),
  );
  return { ...toDelivery(r), history };
}

export function toIdempotencyRecord(r: Row): IdempotencyRecord {
  return {
    requestHash: String(r.request_hash),
    runId: String(r.run_id),
    expiresAt: date(r.expires_at),
    response:
      r.response_status === null || r.response_status === undefined
        ? null
        : { status: Number(r.response_status), body: r.response_body },
  };
}

export function toUpload(r: Row): UploadRecord {
  return {
    id: String(r.id),
    organizationId: String(r.organization_id),
    apiKeyId: String(r.api_key_id),
    environment: r.environment as Environment,
    contentType: String(r.content_type),
    bytes: exactInt(r.bytes, "bytes"),
    fileName: (r.file_name as string | null) ?? null,
    createdAt: date(r.created_at),
    expiresAt: date(r.expires_at),
  };
}
