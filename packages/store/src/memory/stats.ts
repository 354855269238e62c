/** MemoryStore's `serviceStats`: from the runs in flight, the organizations' counters and the outbox. */
import type { OrganizationRecord, RunRecord, ServiceStats } from "../types.js";

export function serviceStatsOf(
  inFlight: Iterable<RunRecord>,
  organizations: Iterable<OrganizationRecord>,
  pendingWebhooks: number,
): ServiceStats {
  let queuedRuns = 0;
  let processingRuns = 0;
  let oldestQueuedAt: Date | null = null;
  for (const run of inFlight) {
    if (run.status === "processing") processingRuns++;
    if (run.status !== "queued") continue;
    queuedRuns++;
    if (!oldestQueuedAt || run.createdAt < oldestQueuedAt) oldestQueuedAt = run.createdAt;
  }
  let reserved = 0;
  for (const org of organizations) reserved += org.reserved;
  return {
    queuedRuns,
    oldestQueuedAt: oldestQueuedAt ? new Date(oldestQueuedAt) : null,
    processingRuns,
    pendingWebhooks,
    reserved,
  };
}
