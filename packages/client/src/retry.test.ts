import { describe, expect, it } from "vitest";
import { API_KEY, dropConnection, FAST_RETRY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { ConflictError, RateLimitError, RefvidError } from "./errors.js";
import { backoffDelayMs, DEFAULT_RETRY_OPTIONS, isRetryableRequest, type RetryEvent } from "./retry.js";
import { parseRetryAfter } from "./retry-after.js";

const RUN_PATH = "/v1/runs/run_1";
const SLUG = "lab-a/model-a/reference-to-video";
const INPUT = { prompt: "a cat" };

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  it.each([
    { value: "1", expected: 1000 },
    { value: " 3 ", expected: 3000 },
    { value: "0", expected: 0 },
    { value: "Wed, 01 Jan 2025 00:00:02 GMT", expected: 2000 },
    { value: "Tue, 31 Dec 2024 23:59:00 GMT", expected: 0 },
    { value: "soon", expected: undefined },
    { value: "-1", expected: undefined },
    { value: "", expected: undefined },
    { value: null, expected: undefined },
  ])("reads $value as $expected ms", ({ value, expected }) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe("backoffDelayMs", () => {
  const options = { baseDelayMs: 100, maxRetryDelayMs: 1000 };
  it.each([
    { attempt: 0, random: 0.999, retryAfterMs: undefined, expected: 99 },
    { attempt: 2, random: 0.5, retryAfterMs: undefined, expected: 200 },
    { attempt: 10, random: 0.999, retryAfterMs: undefined, expected: 999 },
    { attempt: 3, random: 0, retryAfterMs: undefined, expected: 0 },
    { attempt: 0, random: 0.999, retryAfterMs: 5000, expected: 5000 },
    { attempt: 3, random: 0.9, retryAfterMs: 10, expected: 720 },
  ])("attempt $attempt, random $random, Retry-After $retryAfterMs ms waits $expected ms", (row) => {
    expect(backoffDelayMs(row.attempt, options, row.retryAfterMs, () => row.random)).toBe(row.expected);
  });

  it("defaults to 3 retries and waits of at most 20 s", () => {
    expect(DEFAULT_RETRY_OPTIONS).toEqual({ maxRetries: 3, baseDelayMs: 500, maxRetryDelayMs: 20_000 });
  });
});

describe("isRetryableRequest", () => {
  const base = "http://127.0.0.1/prefix";
  it.each<{ method: string; path: string; headers: Record<string, string>; expected: boolean }>([
    { method: "GET", path: "/v1/runs/run_1", headers: {}, expected: true },
    { method: "POST", path: "/v1/runs/run_1/cancel", headers: {}, expected: true },
    { method: "POST", path: "/v1/runs/search", headers: {}, expected: true },
    { method: "POST", path: "/v1/pricing/preview", headers: {}, expected: true },
    { method: "POST", path: `/v1/run/${SLUG}`, headers: {}, expected: false },
    { method: "POST", path: `/v1/run/${SLUG}`, headers: { "Idempotency-Key": "k" }, expected: true },
    { method: "POST", path: "/admin/v1/organizations/org_1/top-ups", headers: {}, expected: false },
    { method: "POST", path: "/v1/files", headers: {}, expected: false },
    { method: "PATCH", path: "/admin/v1/api-keys/key_1", headers: {}, expected: false },
  ])("$method $path with $headers: $expected", ({ method, path, headers, expected }) => {
    const request = new Request(`${base}${path}`, { method, headers });
    expect(isRetryableRequest(request)).toBe(expected);
  });
});

describe("retrying over HTTP", () => {
  it.each([429, 500, 502, 503, 504])(
    "retries a GET answered %i, then returns the success",
    async (status) => {
      const server = await startServer((_req, res, i) => {
        if (i < 2) sendJson(res, status, { error: { type: "x", code: status, message: "try again" } });
        else sendJson(res, 200, makeRun());
      });
      const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
      await expect(client.getRun("run_1")).resolves.toMatchObject({ status: "queued" });
      expect(server.requests.map((r) => r.url)).toEqual([RUN_PATH, RUN_PATH, RUN_PATH]);
    },
  );

  it.each([400, 401, 404, 409, 501])("does not retry a GET answered %i", async (status) => {
    const server = await startServer((_req, res) =>
      sendJson(res, status, { error: { type: "x", code: status, message: "no" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    await expect(client.getRun("run_1")).rejects.toBeInstanceOf(RefvidError);
    expect(server.requests).toHaveLength(1);
  });

  it("retries a GET whose connection was dropped", async () => {
    const server = await startServer((_req, res, i) => {
      if (i === 0) dropConnection(res);
      else sendJson(res, 200, makeRun({ status: "processing" }));
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    await expect(client.getRun("run_1")).resolves.toMatchObject({ status: "processing" });
    expect(server.requests).toHaveLength(2);
  });

  it("waits at least Retry-After seconds, even beyond the backoff", async () => {
    const server = await startServer((_req, res, i) => {
      if (i === 0)
        sendJson(res, 429, { error: "rate_limit_exceeded", message: "slow down" }, { "retry-after": "1" });
      else sendJson(res, 200, makeRun());
    });
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: { ...FAST_RETRY, maxRetryDelayMs: 1000 },
    });
    const started = performance.now();
    await client.getRun("run_1");
    const [first, second] = server.requests;
    expect(second).toBeDefined();
    // Small allowance for timer granularity: the point is "about a second", not "a few ms".
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(990);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it("gives up after maxRetries and throws the last response's typed error", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 429, { error: "rate_limit_exceeded", message: "slow down" }, { "retry-after": "0" }),
    );
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: { ...FAST_RETRY, maxRetries: 2 },
    });
    const error = await client.getRun("run_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterSeconds: 0 });
    expect(server.requests).toHaveLength(3);
  });

  it("stops a retry wait promptly when the signal aborts", async () => {
    // Abort right after the first answer, while the client waits out Retry-After: 30.
    const controller = new AbortController();
    const server = await startServer((_req, res) => {
      sendJson(
        res,
        503,
        { error: { type: "service_unavailable", code: 503, message: "busy" } },
        { "retry-after": "30" },
      );
      setTimeout(() => controller.abort(), 20);
    });
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: { ...FAST_RETRY, maxRetryDelayMs: 60_000 },
    });
    const started = performance.now();
    const error = await client.getRun("run_1", { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(server.requests).toHaveLength(1);
  });

  it.each([
    { fault: "503", answer: (res: Parameters<typeof dropConnection>[0]) => sendJson(res, 503, {}) },
    { fault: "a dropped connection", answer: dropConnection },
  ])("does not retry a submit sent without an idempotency key after $fault", async ({ answer }) => {
    const server = await startServer((_req, res) => answer(res));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    await expect(client.submit(SLUG, INPUT, { idempotencyKey: false })).rejects.toBeDefined();
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers["idempotency-key"]).toBeUndefined();
  });

  it("sends the same Idempotency-Key and body on every retried submit", async () => {
    const faults = [
      (res: Parameters<typeof dropConnection>[0]) => sendJson(res, 503, {}),
      (res: Parameters<typeof dropConnection>[0]) =>
        sendJson(res, 429, { error: "rate_limit_exceeded", message: "slow" }, { "retry-after": "0" }),
      dropConnection,
    ];
    const server = await startServer((_req, res, i) => {
      const fault = faults[i];
      if (fault) fault(res);
      else sendJson(res, 201, makeRun());
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    await expect(client.submit(SLUG, INPUT, { metadata: { order: "1" } })).resolves.toMatchObject({
      status: "queued",
    });

    expect(server.requests).toHaveLength(4);
    const keys = new Set(server.requests.map((r) => r.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const bodies = new Set(server.requests.map((r) => r.body));
    expect([...bodies]).toEqual([JSON.stringify({ input: INPUT, metadata: { order: "1" } })]);
  });

  it("uses a fresh Idempotency-Key for each submit call, and the caller's key when given", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun()));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    await client.submit(SLUG, INPUT);
    await client.submit(SLUG, INPUT);
    await client.submit(SLUG, INPUT, { idempotencyKey: "order-42" });
    const [a, b, c] = server.requests.map((r) => r.headers["idempotency-key"]);
    expect(a).toBeTypeOf("string");
    expect(b).toBeTypeOf("string");
    expect(a).not.toBe(b);
    expect(c).toBe("order-42");
  });

  it("does not retry a keyed submit answered 409", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 409, { error: { type: "idempotency_key_in_use", code: 409, message: "busy" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    await expect(client.submit(SLUG, INPUT)).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);
  });

  it("retries through the raw openapi-fetch client too, which returns errors instead of throwing", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 503, { error: { type: "service_unavailable", code: 503, message: "busy" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    const { data, error, response } = await client.api.GET("/v1/account");
    expect(data).toBeUndefined();
    expect(error).toMatchObject({ error: { type: "service_unavailable" } });
    expect(response.status).toBe(503);
    expect(server.requests).toHaveLength(1 + FAST_RETRY.maxRetries);
  });

  it.each([
    {
      name: "a 429",
      status: 429,
      body: { error: "rate_limit_exceeded", message: "slow down" },
      errorClass: RateLimitError,
    },
    {
      name: "a 503",
      status: 503,
      body: { error: { type: "service_unavailable", code: 503, message: "maintenance" } },
      errorClass: RefvidError,
    },
  ])(
    "throws $name at once, with retryAfterSeconds, when Retry-After exceeds maxRetryDelayMs",
    async ({ status, body, errorClass }) => {
      const server = await startServer((_req, res) =>
        sendJson(res, status, body, { "retry-after": "60", "x-request-id": "req_later" }),
      );
      const retried: RetryEvent[] = [];
      const client = createRefvidClient({
        baseUrl: server.baseUrl,
        apiKey: API_KEY,
        retry: { ...FAST_RETRY, maxRetryDelayMs: 20_000, onRetry: (event) => retried.push(event) },
      });
      const started = performance.now();
      const error = await client.getRun("run_1").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(errorClass);
      expect(error).toMatchObject({ status, retryAfterSeconds: 60, requestId: "req_later" });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(server.requests).toHaveLength(1);
      expect(retried).toEqual([]);
    },
  );

  it("calls onRetry before each retry with the attempt, the delay and the cause", async () => {
    const server = await startServer((_req, res, i) => {
      if (i === 0) sendJson(res, 503, {});
      else if (i === 1) dropConnection(res);
      else if (i === 2)
        sendJson(res, 429, { error: "rate_limit_exceeded", message: "slow" }, { "retry-after": "0" });
      else sendJson(res, 200, makeRun());
    });
    const retried: RetryEvent[] = [];
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: { ...FAST_RETRY, onRetry: (event) => retried.push(event) },
    });
    await expect(client.getRun("run_1")).resolves.toMatchObject({ status: "queued" });
    expect(retried.map(({ attempt, status }) => ({ attempt, status }))).toEqual([
      { attempt: 1, status: 503 },
      { attempt: 2, status: undefined },
      { attempt: 3, status: 429 },
    ]);
    expect(retried.map((event) => event.error === undefined)).toEqual([true, false, true]);
    expect(retried[1]?.error).toBeInstanceOf(TypeError); // fetch's network error
    // Full jitter below each attempt's cap: 1, 2 and 4 ms (FAST_RETRY's base of 1 ms, doubled).
    retried.forEach((event, i) => {
      expect(event.delayMs).toBeGreaterThanOrEqual(0);
      expect(event.delayMs).toBeLessThan(2 ** i);
    });
    expect(retried[0]?.request.url).toBe(`${server.baseUrl}${RUN_PATH}`);
    expect(server.requests).toHaveLength(4);
  });

  it("ends the call with the error onRetry throws", async () => {
    const server = await startServer((_req, res) => sendJson(res, 503, {}));
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: {
        ...FAST_RETRY,
        onRetry: () => {
          throw new Error("no retries today");
        },
      },
    });
    await expect(client.getRun("run_1")).rejects.toThrow("no retries today");
    expect(server.requests).toHaveLength(1);
  });
});
