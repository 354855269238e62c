/**
 * Standard Webhooks signing and verification (https://www.standardwebhooks.com/), shared by the
 * receiver (`verifyWebhook`) and the sender (`signWebhook`) so the two can never drift apart.
 *
 * The signed content is `${webhook-id}.${webhook-timestamp}.${raw body}`, HMAC-SHA256 keyed by
 * the base64-decoded part of the secret after `whsec_`, sent as `v1,<base64>` in
 * `webhook-signature` (space-separated when there are several, e.g. during key rotation).
 *
 * Both use Web Crypto (`crypto.subtle`), so they run in Node, browsers, Deno, Bun and edge
 * runtimes alike; Web Crypto is asynchronous, so both return promises.
 */
import type { WebhookEvent } from "@refvid/api-types";
import { randomUuid } from "./random.js";

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
function decodeSecret(secret: string): Uint8Array | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // atob skips whitespace; reject it (and anything else) rather than use a key other than the one written.
  if (!BASE64.test(encoded)) return undefined;
  const key = base64ToBytes(encoded);
  return key !== undefined && key.length > 0 ? key : undefined;
}

/** Decodes base64, or `undefined` when `atob` rejects it (a length no encoder produces). */
function base64ToBytes(encoded: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function bytesToBase64(bytes: Uint8Array): string {
  return btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
}

async function hmac(key: Uint8Array, id: string, timestamp: string, rawBody: string | Uint8Array) {
  // Hash the body's exact bytes: re-serializing parsed JSON would change them and break the signature.
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const body = typeof rawBody === "string" ? new TextEncoder().encode(rawBody) : rawBody;
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, content));
}

/**
 * Compares two byte strings in time that depends only on their lengths, so that a forger cannot
 * learn a valid signature byte by byte from how fast wrong ones are refused. The length of an
 * HMAC is public, so returning early on a length mismatch leaks nothing.
 */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return difference === 0;
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
 * Whether `value` has the shape of an event: a `type` string and a `data` object. Their values
 * are not checked against the ones this version knows, so that events added later pass.
 */
function isEvent(value: unknown): value is WebhookEvent {
  return isRecord(value) && typeof value.type === "string" && isRecord(value.data);
}

/**
 * Signs a webhook body, returning the headers to send with it.
 *
 * @param rawBody the exact body that will be sent.
 * @param secret the `whsec_…` signing secret.
 * @returns a promise of the headers (Web Crypto is asynchronous).
 * @throws {TypeError} (as a rejection) when `secret` is not `whsec_` followed by base64.
 */
export async function signWebhook(
  rawBody: string | Uint8Array,
  secret: string,
  options: SignWebhookOptions = {},
): Promise<WebhookSignatureHeaders> {
  const key = decodeSecret(secret);
  if (key === undefined) throw new TypeError("webhook secret must be whsec_ followed by base64");
  const id = options.id ?? `msg_${randomUuid()}`;
  const timestamp = String(Math.floor((options.timestamp ?? new Date()).getTime() / 1000));
  const signature = bytesToBase64(await hmac(key, id, timestamp, rawBody));
  return { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": `v1,${signature}` };
}

/**
 * Verifies a webhook and resolves to its event. Pass the body exactly as received (before any
 * JSON parsing) and the request's headers.
 *
 * @example
 * const event = await verifyWebhook(await request.text(), request.headers, secret);
 *
 * @param secret the `whsec_…` secret from `GET /v1/webhooks/secret`, read with a key of the run's
 *   environment (a live run's webhook verifies only with the live secret, a test run's only with
 *   the test one).
 * @returns a promise (Web Crypto is asynchronous): forgetting `await` leaves a pending promise,
 *   never a verified event.
 * @throws {WebhookVerificationError} (as a rejection) when a header is missing, the timestamp is
 *   malformed or further than `toleranceSeconds` from now (a replay), no `v1` signature matches,
 *   or the verified body is not a webhook event (a `type` and a `data` object; their values are
 *   not checked against the ones this version knows, so events added later pass).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookRequestHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
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

  const expected = await hmac(key, id, timestamp, rawBody);
  const matched = signatures.split(/\s+/).some((entry) => {
    const comma = entry.indexOf(",");
    // Other versions (e.g. `v1a`, asymmetric) are not ours to check; skip rather than fail.
    if (comma < 0 || entry.slice(0, comma) !== "v1") return false;
    const given = base64ToBytes(entry.slice(comma + 1));
    return given !== undefined && constantTimeEqual(given, expected);
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
  if (!isEvent(event)) {
    throw new WebhookVerificationError("invalid_payload", "webhook body is not a refvid event");
  }
  return event;
}
