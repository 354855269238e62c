/**
 * How each vendor signs its webhooks, and the keys to check them:
 * - fal: ED25519 over `request id \n user id \n timestamp \n sha256(body) hex`, in the
 *   `x-fal-webhook-*` headers, with the public keys of a JWKS that fal publishes
 *   (docs.fal.ai/model-endpoints/webhooks, "Verifying your webhook"). Keys are cached for a day
 *   and fetched again when no cached key verifies (fal rotated), at most once a minute.
 * - Replicate: Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), the
 *   secret from the API (`GET /v1/webhooks/default/secret`), checked by the `standardwebhooks`
 *   library; fetched again when it stops verifying (rotated), at most once a minute.
 * Both refuse a timestamp more than five minutes from now (a replay).
 */
import { createHash, createPublicKey, type KeyObject, verify } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { HookRefused, type VendorHook } from "../types.js";

/** fal's published keys, unless REFVID_FAL_JWKS_URL says otherwise. */
export const FAL_JWKS_URL = "https://rest.alpha.fal.ai/.well-known/jwks.json";

const KEYS_TTL_MS = 24 * 3_600_000;
const REFETCH_AFTER_MS = 60_000;
const TOLERANCE_S = 300;
const FETCH_TIMEOUT_MS = 10_000;

/** A key set, or a secret, fetched on demand, kept for a day, fetched again after a failure. */
class Refreshed<T> {
  private value: T | null = null;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<T> | null = null;

  constructor(
    private readonly fetchValue: () => Promise<T>,
    private readonly now: () => number,
  ) {}

  /** The cached value, fetched when missing or older than a day. */
  async get(): Promise<T> {
    if (this.value !== null && this.now() - this.fetchedAt < KEYS_TTL_MS) return this.value;
    return this.refetch();
  }

  /** A fresh value, unless the last fetch was under a minute ago (then null: nothing new). */
  async fresher(): Promise<T | null> {
    if (this.now() - this.fetchedAt < REFETCH_AFTER_MS) return null;
    return this.refetch();
  }

  private refetch(): Promise<T> {
    this.pending ??= this.fetchValue()
      .then((value) => {
        this.value = value;
        this.fetchedAt = this.now();
        return value;
      })
      .finally(() => {
        this.pending = null;
      });
    return this.pending;
  }
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(url, {
    headers: { accept: "application/json", ...headers },
    redirect: "error",
    signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/** One JWKS URL's ED25519 keys; shared by every fal route of the process. */
const falKeySets = new Map<string, Refreshed<KeyObject[]>>();

function falKeys(url: string, now: () => number): Refreshed<KeyObject[]> {
  let keys = falKeySets.get(url);
  if (!keys) {
    keys = new Refreshed(async () => {
      const body = (await getJson(url)) as { keys?: unknown };
      const list = Array.isArray(body?.keys) ? body.keys : [];
      return list.flatMap((jwk) => {
        if ((jwk as { kty?: unknown })?.kty !== "OKP" || (jwk as { crv?: unknown }).crv !== "Ed25519")
          return [];
        try {
          return [createPublicKey({ key: jwk as never, format: "jwk" })];
        } catch {
          return [];
        }
      });
    }, now);
    falKeySets.set(url, keys);
  }
  return keys;
}

function checkTimestamp(value: string | undefined, now: number): void {
  if (!value || !/^\d+$/.test(value)) throw new HookRefused("the webhook's timestamp is missing");
  if (Math.abs(now / 1000 - Number(value)) > TOLERANCE_S) {
    throw new HookRefused("the webhook's timestamp is more than five minutes from now");
  }
}

/** Checks a fal webhook's ED25519 signature against the JWKS at `jwksUrl`; throws `HookRefused`. */
export async function verifyFalHook(hook: VendorHook, jwksUrl: string, now: () => number): Promise<void> {
  const { headers, body } = hook;
  const requestId = headers["x-fal-webhook-request-id"];
  const userId = headers["x-fal-webhook-user-id"];
  const timestamp = headers["x-fal-webhook-timestamp"];
  const signature = headers["x-fal-webhook-signature"];
  if (!requestId || userId === undefined || !signature || !/^[0-9a-f]+$/i.test(signature)) {
    throw new HookRefused("the webhook carries no fal signature");
  }
  checkTimestamp(timestamp, now());
  const message = Buffer.from(
    [requestId, userId, timestamp, createHash("sha256").update(body).digest("hex")].join("\n"),
  );
  const given = Buffer.from(signature, "hex");
  const keys = falKeys(jwksUrl, now);
  const matches = (set: KeyObject[]) => set.some((key) => verify(null, message, key, given));
  let set: KeyObject[];
  try {
    set = await keys.get();
  } catch (err) {
    throw new HookRefused(`fal's keys could not be fetched: ${(err as Error).message}`);
  }
  if (matches(set)) return;
  const fresh = await keys.fresher().catch(() => null);
  if (fresh && matches(fresh)) return;
  throw new HookRefused("the webhook's fal signature does not verify");
}

/** A Replicate account's webhook signing secret, fetched from its API with the route's token. */
export class ReplicateHookSecret {
  private readonly secret: Refreshed<Webhook>;

  constructor(apiUrl: string, token: string | null, now: () => number) {
    const url = new URL("v1/webhooks/default/secret", apiUrl.endsWith("/") ? apiUrl : `${apiUrl}/`);
    this.secret = new Refreshed(async () => {
      const body = (await getJson(url.toString(), token ? { authorization: `Bearer ${token}` } : {})) as {
        key?: unknown;
      };
      if (typeof body?.key !== "string") throw new Error("Replicate's answer has no key");
      return new Webhook(body.key);
    }, now);
  }

  /** Checks the Standard Webhooks signature; throws `HookRefused`. */
  async verify(hook: VendorHook): Promise<void> {
    const headers = {
      "webhook-id": hook.headers["webhook-id"] ?? "",
      "webhook-timestamp": hook.headers["webhook-timestamp"] ?? "",
      "webhook-signature": hook.headers["webhook-signature"] ?? "",
    };
    if (!headers["webhook-id"] || !headers["webhook-signature"]) {
      throw new HookRefused("the webhook carries no Standard Webhooks signature");
    }
    const passes = (webhook: Webhook) => {
      try {
        webhook.verify(hook.body, headers);
        return true;
      } catch {
        return false;
      }
    };
    let webhook: Webhook;
    try {
      webhook = await this.secret.get();
    } catch (err) {
      throw new HookRefused(`Replicate's signing secret could not be fetched: ${(err as Error).message}`);
    }
    if (passes(webhook)) return;
    const fresh = await this.secret.fresher().catch(() => null);
    if (fresh && passes(fresh)) return;
    throw new HookRefused("the webhook's signature does not verify with Replicate's secret");
  }
}

/** The job a webhook names and the vendor's status word. */
export interface HookedJob {
  upstreamId: string;
  status: string | null;
  /** The body carries the job's result, which the vendor gives nowhere else (Cog): keep it. */
  keep?: boolean;
}

/** The job a webhook's JSON body names in `idField`, with its `status`; `HookRefused` otherwise. */
export function hookedJob(hook: VendorHook, idField = "id"): HookedJob {
  let body: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(hook.body.toString("utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed;
  } catch {
    // refused below
  }
  if (!body) throw new HookRefused("the webhook's body is not a JSON object");
  const id = body[idField];
  if (typeof id !== "string" || id === "") throw new HookRefused(`the webhook names no job (${idField})`);
  return { upstreamId: id, status: typeof body.status === "string" ? body.status : null };
}

/** A fal webhook, verified: the request it names, which must be the one it is signed for. */
export async function readFalHook(hook: VendorHook, jwksUrl: string, now: () => number): Promise<HookedJob> {
  await verifyFalHook(hook, jwksUrl, now);
  const job = hookedJob(hook, "request_id");
  if (job.upstreamId !== hook.headers["x-fal-webhook-request-id"]) {
    throw new HookRefused("the fal webhook names another request than it is signed for");
  }
  return job;
}
