/**
 * What the limit suites share (concurrency, wallet, rate limit, idempotency, the client's typed
 * errors): a model-d input of known price, a second key of an organization, the concurrency 429's
 * exact shape, and waiting for runs to end or cancelling those in flight.
 */
import { createRefvidClient, isTerminal, type RefvidClient } from "@refvid/client";
import { expect } from "vitest";
import { BUSY, D } from "./api-fixtures.js";
import { callerFor, eventually, type RawResponse, type Tenant, type TestRefvid } from "./harness.js";

export const MODEL_D = D;
export const SUBMIT = `/v1/run/${MODEL_D}`;
/** Tenants that poll get a generous rate limit, so waiting never trips the 120/min default. */
export const FAST = BUSY.rateLimitPerMinute;

/** A model-d 720p 4 s input: 4 x 0.071 = 0.284 USD. */
export const input = (prompt: string) => ({
  prompt,
  image_urls: ["https://example.com/a.png"],
  duration: "4s" as const,
  resolution: "720p" as const,
});
export const submitBody = (prompt: string, extra: Record<string, unknown> = {}) => ({
  input: input(prompt),
  ...extra,
});

export const LONG = "a long run [simulate:delay=20000]";

/** A second key of `tenant`'s organization, with raw HTTP and a client (retries off). */
export interface Key {
  apiKeyId: string;
  apiKey: string;
  client: RefvidClient;
  call: Tenant["call"];
}

/** `addKey(organizationId, options)`: a new live key of that organization on `t`, as a Key. */
export function keyAdder(t: TestRefvid) {
  return async function addKey(
    organizationId: string,
    options: { max_concurrency?: number; rate_limit_per_minute?: number; environment?: "live" | "test" } = {},
  ): Promise<Key> {
    const created = await t.admin("POST", `/admin/v1/organizations/${organizationId}/api-keys`, {
      environment: "live",
      ...options,
    });
    expect(created.status).toBe(201);
    const apiKey = created.body.key as string;
    return {
      apiKeyId: created.body.api_key_id as string,
      apiKey,
      client: createRefvidClient({ baseUrl: t.url, apiKey, retry: { maxRetries: 0 } }),
      call: callerFor(t.url, apiKey),
    };
  };
}

/** Exactly the interface's concurrency 429 with the request id, plus a Retry-After in whole seconds. */
export function expectConcurrency429(
  res: RawResponse,
  scope: "organization" | "api_key",
  limit: number,
  inFlight: number,
) {
  expect(res.status).toBe(429);
  expect(res.body).toStrictEqual({
    error: {
      code: "concurrency_limit_exceeded",
      message: expect.any(String),
      scope,
      limit,
      in_flight: inFlight,
      request_id: res.headers.get("x-request-id"),
    },
  });
  expect(res.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
  // Rate limit headers go on every authenticated response, concurrency 429s included.
  expect(res.headers.get("ratelimit-policy")).toMatch(/^"per-key";q=\d+;w=60$/);
}

export const account = async (call: Tenant["call"]) => {
  const res = await call("GET", "/v1/account");
  expect(res.status).toBe(200);
  return res.body;
};

/** Waits until every run is terminal and returns them. */
export async function waitTerminal(call: Tenant["call"], runIds: string[], timeoutMs = 15_000) {
  return eventually(
    async () => {
      const runs = await Promise.all(runIds.map(async (id) => (await call("GET", `/v1/runs/${id}`)).body));
      return runs.every((run) => isTerminal(run)) ? runs : undefined;
    },
    timeoutMs,
    `runs ${runIds.join(", ")} to end`,
  );
}

/** Cancels every run of the caller's organization still in flight, so shutdown does not wait. */
export async function cancelInFlight(call: Tenant["call"]) {
  const page = await call("POST", "/v1/runs/search", { status: ["queued", "processing"], limit: 100 });
  await Promise.all(
    (page.body.data as { run_id: string }[]).map((run) => call("POST", `/v1/runs/${run.run_id}/cancel`)),
  );
}
