import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { API_KEY, FAST_RETRY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { RequestTimeoutError } from "./errors.js";
import type { RetryEvent } from "./retry.js";

const NO_RETRY = { maxRetries: 0 };
/** A handler that never answers (the test server closes the connection when the test ends). */
const silent = () => undefined;

describe("timeoutMs", () => {
  it("fails a request that gets no answer in time with RequestTimeoutError", async () => {
    const server = await startServer(silent);
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: NO_RETRY,
      timeoutMs: 50,
    });
    const started = performance.now();
    const error = await client.getRun("run_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ name: "RequestTimeoutError", timeoutMs: 50 });
    expect(performance.now() - started).toBeLessThan(1000);
    // Not retried. (On a busy machine the 50 ms can run out before the server has read the request.)
    expect(server.requests.length).toBeLessThanOrEqual(1);
  });

  it("bounds each attempt, retrying one that timed out", async () => {
    const server = await startServer((_req, res, i) => {
      if (i > 0) sendJson(res, 200, makeRun({ status: "processing" }));
    });
    const retried: RetryEvent[] = [];
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: { ...FAST_RETRY, onRetry: (event) => retried.push(event) },
      timeoutMs: 200,
    });
    await expect(client.getRun("run_1")).resolves.toMatchObject({ status: "processing" });
    // The first attempt is never answered; the next ones are at once, though on a busy machine an
    // answer can still come after its attempt's 200 ms: each attempt that timed out was retried.
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    expect(retried).toHaveLength(server.requests.length - 1);
    for (const event of retried) expect(event.error).toBeInstanceOf(RequestTimeoutError);
  });

  it("covers the response body too", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"run_id":'); // and never the rest
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: NO_RETRY });
    const error = await client.getRun("run_1", { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
  });

  it("takes a call's own timeoutMs over the client's", async () => {
    const server = await startServer(silent);
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: NO_RETRY,
      timeoutMs: 0,
    });
    await expect(client.getAccount({ timeoutMs: 40 })).rejects.toMatchObject({ timeoutMs: 40 });
    await expect(client.searchRuns({}, { timeoutMs: 30 })).rejects.toMatchObject({ timeoutMs: 30 });
  });

  it("applies to the raw openapi-fetch client", async () => {
    const server = await startServer(silent);
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: NO_RETRY,
      timeoutMs: 50,
    });
    await expect(client.api.GET("/v1/account")).rejects.toBeInstanceOf(RequestTimeoutError);
  });

  it("keeps the caller's abort distinct from a timeout: the call rejects with the signal's reason", async () => {
    const server = await startServer(silent);
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: FAST_RETRY,
      timeoutMs: 5000,
    });
    // Each abort comes once the server holds the request: the call is in flight, however slow the machine.
    const arrived = (count: number) => vi.waitFor(() => expect(server.requests).toHaveLength(count), 10_000);
    const controller = new AbortController();
    const pending = client.getRun("run_1", { signal: controller.signal });
    const reason = new Error("user navigated away");
    await arrived(1);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    // A caller's deadline is the caller's abort too, even though it is a `TimeoutError` DOMException
    // (the reason `AbortSignal.timeout` aborts with).
    const deadline = new AbortController();
    const timedOut = client.getRun("run_1", { signal: deadline.signal }).catch((e: unknown) => e);
    await arrived(2);
    deadline.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    const failure = await timedOut;
    expect(failure).not.toBeInstanceOf(RequestTimeoutError);
    expect(failure).toMatchObject({ name: "TimeoutError" });
    expect(server.requests).toHaveLength(2);
  });

  it("still fires while the garbage collector runs, for a pending request and a pending body", async () => {
    // undici holds a Request's signal wiring weakly: collected, a timeout would never arrive.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const collecting = setInterval(gc, 5);
    onTestFinished(() => clearInterval(collecting));
    const server = await startServer((req, res) => {
      if (req.url.endsWith("/run_body")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.write("{");
      }
    });
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      retry: NO_RETRY,
      timeoutMs: 100,
    });
    for (const runId of ["run_silent", "run_body"]) {
      await expect(client.getRun(runId)).rejects.toBeInstanceOf(RequestTimeoutError);
    }
  });
});
