/** Identifiers handed out by the service. Runs are `run_<uuid>` as the interface requires. */
import { randomBytes, randomUUID } from "node:crypto";

const compact = () => randomUUID().replaceAll("-", "");

export const newRunId = () => `run_${randomUUID()}`;
export const newOrganizationId = () => `org_${compact()}`;
export const newApiKeyId = () => `key_${compact()}`;
export const newTopUpId = () => `top_${compact()}`;
export const newFileId = () => `file_${compact()}`;
/** A random prefix per process and a counter: unique across processes, and nearly free to make. */
const requestIdPrefix = randomBytes(5).toString("hex");
let requestCount = 0;
export const newRequestId = () => `req_${requestIdPrefix}${(requestCount++).toString(16).padStart(6, "0")}`;
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString("base64")}`;
/** An API key secret: `sk-live-` or `sk-test-` and 40 url-safe characters. */
export const newApiKeySecret = (environment: "live" | "test") =>
  `sk-${environment}-${randomBytes(30).toString("base64url")}`;
export const newUploadId = () => `upload_${compact()}`;
