/**
 * Standard Webhooks signing and verification (https://www.standardwebhooks.com/), shared by the
 * receiver (`verifyWebhook`) and the sender (`signWebhook`) so the two can never drift apart.
 *
 * The signed content is `${webhook-id}.${webhook-timestamp}.${raw body}`, HMAC-SHA256 keyed by
 * the base64-decoded part of the secret after `whsec_`, sent as `v1,<base64>` in
 * `webhook-signature` (space-separated when there are several, e.g. during key rotation).
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import type { WebhookEvent } from "@refvid/api-types";

/** Why a webhook was rejected. */
export type WebhookVerificationReason =
  | "invalid_secret"
  | "missing_header"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "no_matching_signature"
  | "invalid_payload";

/** The webhook is not authentic, too old, or not a refvid event; `reason` says which. */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Request headers as a `Headers` object (fetch) or a plain record (Node's `IncomingHttpHeaders`). */
export type WebhookRequestHeaders = Headers | Record<string, string | string[] | undefined>;

/**
 * The three headers that carry a webhook's signature. A type alias rather than an interface so
 * that it is assignable to a plain header record (and so can be passed straight to verification).
 */
export type WebhookSignatureHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
};

/** Options for {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** The current time, for tests and replays. Default: the clock. */
  now?: Date;
}

/** Options for {@link signWebhook}. */
export interface SignWebhookOptions {
  /** The event id, the same on every delivery attempt. Default: a fresh `msg_<uuid>`. */
  id?: string;
  /** The attempt's time. Default: now. */
  timestamp?: Date;
}

const SECRET_PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DEFAULT_TOLERANCE_SECONDS = 300;

/** Decodes `whsec_<base64>` (or bare base64) to the HMAC key; `undefined` when it is not one. */
function decodeSecret(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // Buffer.from silently skips characters that are not base64; reject them instead of using a wrong key.
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  return key.length > 0 ? key : undefined;
}

function hmac(key: Buffer, id: string, timestamp: string, rawBody: string | Uint8Array): Buffer {
  // Hash the body's exact bytes: re-serializing parsed JSON would change them and break the signature.
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(rawBody).digest();
}

/** Case-insensitive header lookup; repeated headers are joined with a space. */
function header(headers: WebhookRequestHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? value.join(" ") : value;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Signs a webhook body, returning the headers to send with it.
 *
 * @param rawBody the exact body that will be sent.
 * @param secret the `whsec_…` signing secret.
 * @throws {TypeError} when `secret` is not `whsec_` followed by base64.
 */
export function signWebhook(
  rawBody: string | Uint8Array,
  secret: string,
  options: SignWebhookOptions = {},
): WebhookSignatureHeaders {
  const key = decodeSecret(secret);
  if (key === undefined) throw new TypeError("webhook secret must be whsec_ followed by base64");
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = String(Math.floor((options.timestamp ?? new Date()).getTime() / 1000));
  const signature = hmac(key, id, timestamp, rawBody).toString("base64");
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

/**
 * Verifies a webhook and returns its event. Pass the body exactly as received (before any JSON
 * parsing) and the request's headers.
 *
 * @param secret the `whsec_…` secret from `GET /v1/webhooks/secret`.
 * @throws {WebhookVerificationError} when a header is missing, the timestamp is malformed or
 *   further than `toleranceSeconds` from now (a replay), no `v1` signature matches, or the
 *   verified body is not a webhook event.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookRequestHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): WebhookEvent {
  const key = decodeSecret(secret);
  if (key === undefined) {
    throw new WebhookVerificationError("invalid_secret", "webhook secret must be whsec_ followed by base64");
  }

  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  const missing = [
    id ? undefined : "webhook-id",
    timestamp ? undefined : "webhook-timestamp",
    signatures ? undefined : "webhook-signature",
  ].filter((name) => name !== undefined);
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError("missing_header", `missing header(s): ${missing.join(", ")}`);
  }

  if (!/^\d+$/.test(timestamp)) {
    throw new WebhookVerificationError(
      "invalid_timestamp",
      `webhook-timestamp is not unix seconds: ${timestamp}`,
    );
  }
  // The timestamp is inside the signed content, so checking it after the signature would be
  // equally safe; checking it first just rejects replays without computing an HMAC.
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const skew = nowSeconds - Number(timestamp);
  if (skew > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_too_old",
      `webhook-timestamp is ${skew} s old (tolerance ${tolerance} s)`,
    );
  }
  if (-skew > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_too_new",
      `webhook-timestamp is ${-skew} s in the future (tolerance ${tolerance} s)`,
    );
  }

  const expected = hmac(key, id, timestamp, rawBody);
  const matched = signatures.split(/\s+/).some((entry) => {
    const comma = entry.indexOf(",");
    // Other versions (e.g. `v1a`, asymmetric) are not ours to check; skip rather than fail.
    if (comma < 0 || entry.slice(0, comma) !== "v1") return false;
    const given = Buffer.from(entry.slice(comma + 1), "base64");
    // timingSafeEqual needs equal lengths; the length of an HMAC is public, so this leaks nothing.
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matched) {
    throw new WebhookVerificationError(
      "no_matching_signature",
      "no v1 signature in webhook-signature matches",
    );
  }

  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === "string" ? rawBody : new TextDecoder().decode(rawBody));
  } catch {
    throw new WebhookVerificationError("invalid_payload", "webhook body is not JSON");
  }
  if (!isRecord(event) || typeof event.type !== "string" || !isRecord(event.data)) {
    throw new WebhookVerificationError("invalid_payload", "webhook body is not a refvid event");
  }
  return event as WebhookEvent;
}
