/** PostgresStore's statements, one operation per file. */
export { acquireProvider } from "./acquire-provider.js";

export { addTopUp } from "./add-top-up.js";
export { admitRun } from "./admit-run.js";
export { claimRuns } from "./claim-runs.js";
export { claimWebhookDeliveries } from "./claim-webhook-deliveries.js";
export { completeIdempotency } from "./complete-idempotency.js";
export { completeRun } from "./complete-run.js";
export { countRequest } from "./count-request.js";
export { createApiKey } from "./create-api-key.js";
export { createOrganization } from "./create-organization.js";
export { findApiKeyByHash } from "./find-api-key-by-hash.js";
export { findOverdueRuns } from "./find-overdue-runs.js";
export { getApiKey } from "./get-api-key.js";
export { getOrganization } from "./get-organization.js";
export { getRun } from "./get-run.js";
export { listWebhookDeliveries } from "./list-webhook-deliveries.js";
export { recordUpstream } from "./record-upstream.js";
export { recordWebhookAttempt } from "./record-webhook-attempt.js";
export { releaseRun } from "./release-run.js";
export { renewLease } from "./renew-lease.js";
export { requeueExpiredLeases } from "./requeue-expired-leases.js";
export { revokeApiKey } from "./revoke-api-key.js";
export { searchRuns, searchRunsQuery } from "./search-runs.js";
export { setProgress } from "./set-progress.js";
export { updateApiKey } from "./update-api-key.js";
