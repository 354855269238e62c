/** The record of a run as admission inserts it, built the same way wherever it is needed. */
import { DEFAULT_WEBHOOK_EVENTS } from "@refvid/core";
import { copy } from "./memory/copy.js";
import type { Environment, NewRun, RunRecord } from "./types.js";

/**
 * An admitted run as it starts: queued, nothing charged, delivered or leased yet. Its input and
 * metadata are copies: the caller's objects stay the caller's.
 */
export function queuedRun(run: NewRun, environment: Environment, priority: number): RunRecord {
  const record: RunRecord = {
    // Named field by field: spreading the caller's object took a slow generic path (a tenth of a submit).
    id: run.id,
    organizationId: run.organizationId,
    apiKeyId: run.apiKeyId,
    endpoint: run.endpoint,
    input: copy(run.input),
    webhookUrl: run.webhookUrl,
    webhookEvents: [...(run.webhookEvents ?? DEFAULT_WEBHOOK_EVENTS)],
    metadata: copy(run.metadata),
    priceUnit: run.priceUnit,
    unitPrice: run.unitPrice,
    reservedSeconds: run.reservedSeconds,
    reserved: run.reserved,
    createdAt: new Date(run.createdAt.getTime()),
    environment,
    priority,
    status: "queued",
    charged: null,
    billableSeconds: null,
    output: null,
    error: null,
    progress: null,
    startedAt: null,
    completedAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    attempts: 0,
    upstream: null,
    provider: null,
    route: null,
    vendorCost: null,
  };
  if (run.video) record.video = { ...run.video, deletedAt: null };
  return record;
}
