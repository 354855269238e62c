/**
 * The three limits (interface, "Limits"), the wallet, and idempotency, against the real server:
 * organization and key concurrency caps under parallel load, the balance under parallel load,
 * runs that end without a charge, the per-key rate limit, Idempotency-Key, and the client's
 * typed errors for each of them.
 */
import {
  ConcurrencyLimitError,
  createRefvidClient,
  InsufficientBalanceError,
  isTerminal,
  RateLimitError,
  type RefvidClient,
} from "@refvid/client";
import { describe, expect, it } from "vitest";
import {
  eventually,
  type RawResponse,
  rawRequest,
  startTestRefvid,
  type Tenant,
  useTestRefvid,
} from "./harness.js";

const MODEL_D = "lab-d/model-d/reference-to-video" as const;
const SUBMIT = `/v1/run/${MODEL_D}`;
/** Tenants that poll get a generous rate limit, so waiting never trips the 120/min default. */
const FAST = 100_000;

const t = useTestRefvid();

/** A model-d 720p 4 s input: 4 x 0.071 = 0.284 USD. */
const input = (prompt: string) => ({
  prompt,
  image_urls: ["https://example.com/a.png"],
  duration: "4s" as const,
  resolution: "720p" as const,
});
const submitBody = (prompt: string, extra: Record<string, unknown> = {}) => ({
  input: input(prompt),
  ...extra,
});

const LONG = "a long run [simulate:delay=20000]";

/** A second key of `tenant`'s organization, with raw HTTP and a client (retries off). */
interface Key {
  apiKeyId: string;
  apiKey: string;
  client: RefvidClient;
  call: Tenant["call"];
}

async function addKey(
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
    call: rawCaller(t.url, apiKey),
  };
}

function rawCaller(url: string, apiKey: string): Tenant["call"] {
  return (method, path, body, headers = {}) =>
    rawRequest(url, method, path, { body, headers: { authorization: `Key ${apiKey}`, ...headers } });
}

/** Exactly the interface's concurrency 429, plus a Retry-After in whole seconds. */
function expectConcurrency429(
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
    },
  });
  expect(res.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
  // Rate limit headers go on every authenticated response, concurrency 429s included.
  expect(res.headers.get("ratelimit-policy")).toMatch(/^"per-key";q=\d+;w=60$/);
}

const account = async (call: Tenant["call"]) => {
  const res = await call("GET", "/v1/account");
  expect(res.status).toBe(200);
  return res.body;
};

/** Waits until every run is terminal and returns them. */
async function waitTerminal(call: Tenant["call"], runIds: string[], timeoutMs = 15_000) {
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
async function cancelInFlight(call: Tenant["call"]) {
  const page = await call("POST", "/v1/runs/search", { status: ["queued", "processing"], limit: 100 });
  await Promise.all(
    (page.body.data as { run_id: string }[]).map((run) => call("POST", `/v1/runs/${run.run_id}/cancel`)),
  );
}

const micros = (usd: string) => {
  expect(usd).toMatch(/^-?\d+\.\d{2,6}$/);
  return Math.round(Number(usd) * 1_000_000);
};

describe("organization concurrency cap", () => {
  it("admits exactly the tier cap across two keys under parallel load, and frees slots on cancel", async () => {
    const a = await t.tenant({ maxConcurrency: 10, rateLimitPerMinute: FAST, balanceUsd: "100.00" });
    const keyA: Key = a;
    const keyB = await addKey(a.organizationId, { max_concurrency: 10, rate_limit_per_minute: FAST });
    const keys = [keyA, keyB];
    try {
      const before = await account(keyA.call);
      expect(before.concurrency).toEqual({ tier: "starter", limit: 10, in_flight: 0, available: 10 });

      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => {
          const key = keys[i % 2] as Key;
          return key.call("POST", SUBMIT, submitBody(`${LONG} #${i}`)).then((res) => ({ res, key }));
        }),
      );
      const admitted = responses.filter(({ res }) => res.status === 201);
      const rejected = responses.filter(({ res }) => res.status !== 201);
      expect(admitted).toHaveLength(10);
      expect(rejected).toHaveLength(20);

      for (const { res, key } of rejected) {
        // A key that holds all ten slots itself is told about its own cap first (key cap checked
        // first); otherwise the organization is the limit.
        const byThisKey = admitted.filter((x) => x.key === key).length;
        if (byThisKey === 10) expectConcurrency429(res, "api_key", 10, 10);
        else expectConcurrency429(res, "organization", 10, 10);
      }

      // Each admission took one organization slot and nothing ended meanwhile, so the admitted
      // responses announce 9, 8, …, 0 remaining, each value once.
      const remaining = admitted.map(({ res }) => Number(res.headers.get("x-concurrency-remaining")));
      expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const { res } of admitted) {
        expect(res.body.status).toBe("queued");
        expect(res.headers.get("x-run-id")).toBe(res.body.run_id);
      }

      const full = await account(keyA.call);
      expect(full.concurrency).toEqual({ tier: "starter", limit: 10, in_flight: 10, available: 0 });
      const perKey = await Promise.all(keys.map(async (k) => (await account(k.call)).api_key_concurrency));
      expect(perKey.reduce((sum, c) => sum + c.in_flight, 0)).toBe(10);
      for (const c of perKey) expect(c.available).toBe(0);
      // 10 runs of 0.284 reserved.
      expect(full.wallet).toMatchObject({
        balance_usd: "100.00",
        reserved_usd: "2.84",
        available_usd: "97.16",
      });

      // Cancel three: exactly three new submits get in.
      const toCancel = admitted.slice(0, 3);
      for (const { res, key } of toCancel) {
        const cancelled = await key.call("POST", `/v1/runs/${res.body.run_id}/cancel`);
        expect(cancelled.status).toBe(200);
        expect(cancelled.body.status).toBe("cancelled");
      }
      expect((await account(keyA.call)).concurrency).toMatchObject({ in_flight: 7, available: 3 });

      const again = await Promise.all(
        Array.from({ length: 8 }, (_, i) => {
          const key = keys[i % 2] as Key;
          return key.call("POST", SUBMIT, submitBody(`${LONG} again #${i}`));
        }),
      );
      expect(again.filter((res) => res.status === 201)).toHaveLength(3);
      const againRejected = again.filter((res) => res.status !== 201);
      expect(againRejected).toHaveLength(5);
      for (const res of againRejected) expect(res.body.error.code).toBe("concurrency_limit_exceeded");
      expect((await account(keyA.call)).concurrency).toMatchObject({ in_flight: 10, available: 0 });
    } finally {
      await cancelInFlight(keyA.call);
    }
  });
});

describe("API key concurrency cap", () => {
  it("holds a key to its own cap while the organization has headroom, and frees slots as runs end", async () => {
    const tenant = await t.tenant({ maxConcurrency: 3, rateLimitPerMinute: FAST });
    const short = "a short run [simulate:delay=300]";
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => tenant.call("POST", SUBMIT, submitBody(`${short} #${i}`))),
    );
    const admitted = responses.filter((res) => res.status === 201);
    expect(admitted).toHaveLength(3);
    for (const res of responses.filter((r) => r.status !== 201)) expectConcurrency429(res, "api_key", 3, 3);
    expect(
      admitted.map((res) => Number(res.headers.get("x-concurrency-remaining"))).sort((x, y) => x - y),
    ).toEqual([0, 1, 2]);

    const mid = await account(tenant.call);
    expect(mid.api_key_concurrency).toEqual({ limit: 3, in_flight: 3, available: 0 });
    expect(mid.concurrency).toMatchObject({ limit: 10, in_flight: 3, available: 7 });

    // No cancel: the runs end by themselves and give their slots back.
    const ended = await waitTerminal(
      tenant.call,
      admitted.map((res) => res.body.run_id),
    );
    for (const run of ended) expect(run.status).toBe("succeeded");
    const after = await account(tenant.call);
    expect(after.api_key_concurrency).toEqual({ limit: 3, in_flight: 0, available: 3 });

    const next = await Promise.all(
      Array.from({ length: 3 }, (_, i) => tenant.call("POST", SUBMIT, submitBody(`${short} next #${i}`))),
    );
    for (const res of next) expect(res.status).toBe(201);
    await waitTerminal(
      tenant.call,
      next.map((res) => res.body.run_id),
    );
  });
});

describe("wallet under parallel load", () => {
  it("admits only what the balance covers and never shows a negative available amount", async () => {
    const tenant = await t.tenant({ balanceUsd: "1.00", rateLimitPerMinute: FAST });
    const samples: { balance_usd: string; reserved_usd: string; available_usd: string }[] = [];
    let flying = true;
    const sampler = (async () => {
      while (flying) samples.push((await account(tenant.call)).wallet);
    })();

    let responses: RawResponse[];
    try {
      responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          tenant.call("POST", SUBMIT, submitBody(`wallet [simulate:delay=800] #${i}`)),
        ),
      );
      const admitted = responses.filter((res) => res.status === 201);
      expect(admitted).toHaveLength(3);
      const rejected = responses.filter((res) => res.status !== 201);
      expect(rejected).toHaveLength(17);
      for (const res of rejected) {
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({
          type: "insufficient_balance",
          code: 400,
          required_usd: "0.284",
        });
        expect(res.body.error.available_usd).toMatch(/^\d+\.\d{2,6}$/);
        // Only charges that equal their reservations happen meanwhile: 1.00 - 3 x 0.284.
        expect(res.body.error.available_usd).toBe("0.148");
      }
      const ended = await waitTerminal(
        tenant.call,
        admitted.map((res) => res.body.run_id),
      );
      for (const run of ended) {
        expect(run.status).toBe("succeeded");
        expect(run.billing).toMatchObject({ amount: "0.284", currency: "usd" });
      }
    } finally {
      flying = false;
      await sampler;
    }

    // The sampler saw the runs in flight, not only before and after.
    expect(samples.some((sample) => micros(sample.reserved_usd) > 0)).toBe(true);
    for (const sample of samples) {
      expect(sample.available_usd.startsWith("-")).toBe(false);
      expect(micros(sample.available_usd)).toBeGreaterThanOrEqual(0);
      expect(micros(sample.balance_usd) - micros(sample.reserved_usd)).toBe(micros(sample.available_usd));
    }
    const wallet = (await account(tenant.call)).wallet;
    expect(wallet).toMatchObject({
      balance_usd: "0.148",
      reserved_usd: "0.00",
      available_usd: "0.148",
      total_spent_usd: "0.852",
    });
  });
});

describe("runs that end without delivering", () => {
  const expectUncharged = async (tenant: Tenant, run: { billing: unknown; output: unknown }) => {
    expect(run.billing).toMatchObject({ amount: "0.00", currency: "usd" });
    expect(run.output).toBeNull();
    const acct = await account(tenant.call);
    expect(acct.wallet).toMatchObject({
      balance_usd: "10.00",
      reserved_usd: "0.00",
      available_usd: "10.00",
      total_spent_usd: "0.00",
    });
    expect(acct.concurrency).toMatchObject({ in_flight: 0 });
    expect(acct.api_key_concurrency).toEqual({ limit: 1, in_flight: 0, available: 1 });
  };

  it("a failed run is not charged and frees its reservation and slot", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00", maxConcurrency: 1, rateLimitPerMinute: FAST });
    const submitted = await tenant.call("POST", SUBMIT, submitBody("[simulate:fail] [simulate:delay=200]"));
    expect(submitted.status).toBe(201);
    const inFlight = await account(tenant.call);
    expect(inFlight.wallet).toMatchObject({ reserved_usd: "0.284", available_usd: "9.716" });
    const [run] = await waitTerminal(tenant.call, [submitted.body.run_id]);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ type: "provider_error" });
    await expectUncharged(tenant, run);
    // The one slot is free again.
    const next = await tenant.call("POST", SUBMIT, submitBody("[simulate:delay=50] after a failure"));
    expect(next.status).toBe(201);
    await waitTerminal(tenant.call, [next.body.run_id]);
  });

  it("a cancelled run is not charged and frees its reservation and slot", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00", maxConcurrency: 1, rateLimitPerMinute: FAST });
    try {
      const submitted = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expect(submitted.status).toBe(201);
      const blocked = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expectConcurrency429(blocked, "api_key", 1, 1);
      expect((await account(tenant.call)).wallet).toMatchObject({ reserved_usd: "0.284" });

      const cancelled = await tenant.call("POST", `/v1/runs/${submitted.body.run_id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe("cancelled");
      await expectUncharged(tenant, cancelled.body);
      const polled = await tenant.call("GET", `/v1/runs/${submitted.body.run_id}`);
      expect(polled.body).toMatchObject({ status: "cancelled", billing: { amount: "0.00" } });

      const again = await tenant.call("POST", `/v1/runs/${submitted.body.run_id}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body.error.type).toBe("run_not_cancellable");

      const next = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expect(next.status).toBe(201);
    } finally {
      await cancelInFlight(tenant.call);
    }
  });

  it("a timed-out run is not charged and frees its reservation and slot", async () => {
    const short = await startTestRefvid({ REFVID_RUN_TIMEOUT_MS: "500" });
    try {
      const tenant = await short.tenant({ balanceUsd: "10.00", maxConcurrency: 1, rateLimitPerMinute: FAST });
      const submitted = await tenant.call("POST", SUBMIT, submitBody("too slow [simulate:delay=5000]"));
      expect(submitted.status).toBe(201);
      const [run] = await waitTerminal(tenant.call, [submitted.body.run_id], 5_000);
      expect(run.status).toBe("timeout");
      expect(run.error).toMatchObject({ type: "timeout" });
      await expectUncharged(tenant, run);
      const next = await tenant.call("POST", SUBMIT, submitBody("again [simulate:delay=5000]"));
      expect(next.status).toBe(201);
      const [second] = await waitTerminal(tenant.call, [next.body.run_id], 5_000);
      expect(second.status).toBe("timeout");
    } finally {
      await short.close();
      expect(short.mismatches).toEqual([]);
    }
  });
});

describe("rate limit", () => {
  it("allows rate_limit_per_minute requests, then answers 429 on any endpoint, per key", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: 5 });
    const requests: (() => Promise<RawResponse>)[] = [
      () => tenant.call("GET", "/v1/account"),
      () => tenant.call("POST", "/v1/pricing/preview", { endpoint: MODEL_D, input: input("price") }),
      () => tenant.call("POST", "/v1/runs/search", {}),
      () => tenant.call("POST", SUBMIT, submitBody("rate limited [simulate:delay=50]")),
      () => tenant.call("GET", "/v1/account"),
    ];
    const resets: number[] = [];
    for (const [i, request] of requests.entries()) {
      const res = await request();
      expect(res.status).toBeLessThan(300);
      expect(res.headers.get("ratelimit-policy")).toBe('"per-key";q=5;w=60');
      const match = /^"per-key";r=(\d+);t=(\d+)$/.exec(res.headers.get("ratelimit") ?? "");
      expect(match, `RateLimit header of request ${i + 1}`).not.toBeNull();
      expect(Number(match?.[1])).toBe(4 - i);
      const reset = Number(match?.[2]);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      resets.push(reset);
    }
    // One fixed window: the reset never moves later.
    for (let i = 1; i < resets.length; i++) expect(resets[i]).toBeLessThanOrEqual(resets[i - 1] as number);

    const sixth = await tenant.call("GET", "/v1/account");
    expect(sixth.status).toBe(429);
    expect(sixth.body).toStrictEqual({ error: "rate_limit_exceeded", message: expect.any(String) });
    const retryAfter = sixth.headers.get("retry-after") ?? "";
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(sixth.headers.get("ratelimit")).toMatch(/^"per-key";r=0;t=\d+$/);

    // A submit is refused by the rate limit too, before any admission.
    const submit = await tenant.call("POST", SUBMIT, submitBody("over the limit"));
    expect(submit.status).toBe(429);
    expect(submit.body).toStrictEqual({ error: "rate_limit_exceeded", message: expect.any(String) });

    // Another key of the same organization has its own allowance.
    const other = await addKey(tenant.organizationId);
    const fresh = await other.call("GET", "/v1/account");
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("ratelimit-policy")).toBe('"per-key";q=120;w=60');
    expect(fresh.headers.get("ratelimit")).toMatch(/^"per-key";r=119;t=\d+$/);
  });
});

describe("idempotency", () => {
  it("replays the same request, refuses a different body, and creates one run under parallel retries", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const key = `idem-${Date.now()}-a`;
    const body = submitBody("idempotent [simulate:delay=100]", { metadata: { case: "replay" } });

    const first = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body.run_id).toBe(first.body.run_id);
    expect(second.body).toEqual(first.body);
    // Keys are scoped to the organization, not to the API key: its other keys replay too.
    const sibling = await addKey(tenant.organizationId, { rate_limit_per_minute: FAST });
    const fromSibling = await sibling.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(fromSibling.status).toBe(201);
    expect(fromSibling.headers.get("idempotent-replayed")).toBe("true");
    expect(fromSibling.body.run_id).toBe(first.body.run_id);
    const found = await tenant.call("POST", "/v1/runs/search", { metadata: { case: "replay" } });
    expect(found.body.data.map((r: { run_id: string }) => r.run_id)).toEqual([first.body.run_id]);

    const different = await tenant.call(
      "POST",
      SUBMIT,
      submitBody("another prompt", { metadata: { case: "replay" } }),
      { "idempotency-key": key },
    );
    expect(different.status).toBe(422);
    expect(different.body.error).toMatchObject({ type: "idempotency_key_reused", code: 422 });

    const parallelKey = `idem-${Date.now()}-b`;
    const parallelBody = submitBody("parallel [simulate:delay=100]", { metadata: { case: "parallel" } });
    const parallel = await Promise.all(
      Array.from({ length: 10 }, () =>
        tenant.call("POST", SUBMIT, parallelBody, { "idempotency-key": parallelKey }),
      ),
    );
    // The response is stored with the admission: every racer gets the one run.
    expect(parallel.map((res) => res.status)).toEqual(parallel.map(() => 201));
    const created = parallel;
    expect(new Set(created.map((res) => res.body.run_id)).size).toBe(1);
    expect(created.filter((res) => res.headers.get("idempotent-replayed") !== "true")).toHaveLength(1);
    const parallelRuns = await tenant.call("POST", "/v1/runs/search", { metadata: { case: "parallel" } });
    expect(parallelRuns.body.data).toHaveLength(1);
    expect(parallelRuns.body.data[0].run_id).toBe(created[0]?.body.run_id);

    // Keys belong to an organization: another one may use the same key for its own run.
    const stranger = await t.tenant({ rateLimitPerMinute: FAST });
    const theirs = await stranger.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.run_id).not.toBe(first.body.run_id);

    await waitTerminal(tenant.call, [first.body.run_id, created[0]?.body.run_id]);
    await waitTerminal(stranger.call, [theirs.body.run_id]);
  });

  it("answers a retry while a sync submit with the key is still waiting with the same run's end, then replays it", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const key = `idem-${Date.now()}-sync`;
    const body = submitBody("sync [simulate:delay=1500]", { sync: true });
    // fetch resolves at the status line: the server flushes it right after admission.
    const pending = await fetch(`${t.url}${SUBMIT}`, {
      method: "POST",
      headers: {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": key,
      },
      body: JSON.stringify(body),
    });
    expect(pending.status).toBe(201);
    const runId = pending.headers.get("x-run-id");
    expect(runId).toMatch(/^run_/);

    const meanwhile = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(meanwhile.status).toBe(201);
    expect(meanwhile.headers.get("idempotent-replayed")).toBe("true");
    expect(meanwhile.headers.get("x-run-id")).toBe(runId);
    expect(meanwhile.body).toMatchObject({ run_id: runId, status: "succeeded" });

    const terminal = JSON.parse(await pending.text());
    expect(terminal).toMatchObject({ run_id: runId, status: "succeeded" });
    expect(meanwhile.body).toEqual(terminal);

    const replay = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(terminal);
    const runs = await tenant.call("POST", "/v1/runs/search", {});
    expect(runs.body.data).toHaveLength(1);
  });
});

describe("idempotency and limits together", () => {
  it("a submit refused by a limit stores no result: the same key is admitted once there is room", async () => {
    const tenant = await t.tenant({ maxConcurrency: 1, rateLimitPerMinute: FAST });
    try {
      const first = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expect(first.status).toBe(201);
      const key = `idem-${Date.now()}-retry`;
      const body = submitBody("retried [simulate:delay=20000]");
      const refused = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
      expectConcurrency429(refused, "api_key", 1, 1);
      const refusedAgain = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
      expectConcurrency429(refusedAgain, "api_key", 1, 1);
      expect((await tenant.call("POST", `/v1/runs/${first.body.run_id}/cancel`)).status).toBe(200);
      const admitted = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
      expect(admitted.status).toBe(201);
      expect(admitted.headers.get("idempotent-replayed")).toBeNull();
    } finally {
      await cancelInFlight(tenant.call);
    }
  });

  it("a sync submit whose client left still lets the key replay once the run has ended", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const key = `idem-${Date.now()}-left`;
    const body = submitBody("sync, client leaves [simulate:delay=300]", { sync: true });
    const leave = new AbortController();
    const pending = await fetch(`${t.url}${SUBMIT}`, {
      method: "POST",
      headers: {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": key,
      },
      body: JSON.stringify(body),
      signal: leave.signal,
    });
    expect(pending.status).toBe(201);
    const runId = pending.headers.get("x-run-id") as string;
    leave.abort();
    await pending.text().catch(() => undefined);
    const [run] = await waitTerminal(tenant.call, [runId]);
    expect(run.status).toBe("succeeded");

    // The key is never stuck: a retry answers with the run's end.
    const replay = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toMatchObject({ run_id: runId, status: "succeeded" });
  });
});

describe("the client's typed errors", () => {
  it("ConcurrencyLimitError carries scope, limit, in-flight count and Retry-After", async () => {
    const tenant = await t.tenant({ maxConcurrency: 1, rateLimitPerMinute: FAST });
    try {
      await tenant.client.submit(MODEL_D, input(LONG));
      const err = await tenant.client.submit(MODEL_D, input(LONG)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConcurrencyLimitError);
      const limit = err as ConcurrencyLimitError;
      expect(limit.status).toBe(429);
      expect(limit.type).toBe("concurrency_limit_exceeded");
      expect(limit.scope).toBe("api_key");
      expect(limit.limit).toBe(1);
      expect(limit.inFlight).toBe(1);
      expect(limit.retryAfterSeconds).toBeGreaterThanOrEqual(1);

      // The organization's cap, met through a second key that has room of its own.
      const full = await t.tenant({ maxConcurrency: 10, rateLimitPerMinute: FAST });
      try {
        const started = await Promise.all(
          Array.from({ length: 10 }, (_, i) => full.client.submit(MODEL_D, input(`${LONG} org #${i}`))),
        );
        expect(started).toHaveLength(10);
        const other = await addKey(full.organizationId, { max_concurrency: 5, rate_limit_per_minute: FAST });
        const orgErr = await other.client.submit(MODEL_D, input(LONG)).catch((e: unknown) => e);
        expect(orgErr).toBeInstanceOf(ConcurrencyLimitError);
        expect(orgErr).toMatchObject({ scope: "organization", limit: 10, inFlight: 10 });
        expect((orgErr as ConcurrencyLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      } finally {
        await cancelInFlight(full.call);
      }
    } finally {
      await cancelInFlight(tenant.call);
    }
  });

  it("RateLimitError on a key over its rate limit", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: 1 });
    await tenant.client.getAccount();
    const err = await tenant.client.submit(MODEL_D, input("too many")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    const limited = err as RateLimitError;
    expect(limited.status).toBe(429);
    expect(limited.type).toBe("rate_limit_exceeded");
    expect(limited.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it("InsufficientBalanceError names the required and available amounts", async () => {
    const tenant = await t.tenant({ balanceUsd: "0.10", rateLimitPerMinute: FAST });
    const err = await tenant.client.submit(MODEL_D, input("too expensive")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientBalanceError);
    const poor = err as InsufficientBalanceError;
    expect(poor.status).toBe(400);
    expect(poor.type).toBe("insufficient_balance");
    expect(poor.requiredUsd).toBe("0.284");
    expect(poor.availableUsd).toBe("0.10");
  });
});
