/** Identifiers handed out by the service. Runs are `run_<uuid>` as the interface requires. */
import { randomBytes, randomUUID } from "node:crypto";

const compact = () => randomUUID().replaceAll("-", "");

export const newRunId = () => `run_${randomUUID()}`;
export const newOrganizationId = () => `org_${compact()}`;
export const newApiKeyId = () => `key_${compact()}`;
export const newTopUpId = () => `top_${compact()}`;
export const newFileId = () => `file_${compact()}`;
export const newRequestId = () => `req_${randomBytes(8).toString("hex")}`;
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString("base64")}`;
/** An API key secret: `sk-live-` or `sk-test-` and 40 url-safe characters. */
export const newApiKeySecret = (environment: "live" | "test") =>
  `sk-${environment}-${randomBytes(30).toString("base64url")}`;
