/**
 * Every response carries its request id in `X-Request-Id`, and every error body carries the same
 * id as `request_id` (issue 30): inside `error`, or beside it in the rate-limit 429, whose `error`
 * is a string. Checked over real HTTP for each kind of answer: routes, probes, metrics, the docs
 * and console files, 404s, the body parser's and the validator's refusals, the limits' 429s, the
 * answers Node's parser refuses (client-errors.ts: a header too large, bytes that are no request,
 * a body slower than the minimum rate), the probe port and a draining process.
 *
 * A connection past REFVID_MAX_CONNECTIONS or REFVID_MAX_CONNECTIONS_PER_ADDRESS gets no answer
 * at all (closed as it is accepted, before a byte is read: connection-limits.e2e.test.ts), so it
 * has no header to carry.
 */
import { connect } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { BUSY, D, quickD, slow } from "./api-fixtures.js";
import { rawRequest, type Tenant, useTestRefvid } from "./harness.js";
import { cancelInFlight, expectConcurrency429 } from "./limit-helpers.js";

/** A request id refvid makes (`req_…`), or one a client sent that it kept. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,100}$/;

interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  body: any;
}

/** The id in an error body: `error.request_id`, or `request_id` beside a string `error`. */
const bodyRequestId = (body: any): unknown =>
  typeof body?.error === "string" ? body.request_id : body?.error?.request_id;

/**
 * `X-Request-Id` is there; for an error (unless `errorBody` is false: a probe's 503 is a status, not
 * an error), the body names the same id. Returns the id.
 */
function expectRequestId(answer: Answer, status: number, errorBody = status >= 400): string {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  const id = answer.headers.get("x-request-id") ?? "";
  expect(id, `X-Request-Id of a ${status}`).toMatch(REQUEST_ID);
  if (errorBody) expect(bodyRequestId(answer.body), `request_id of a ${status}`).toBe(id);
  return id;
}

/** One request on a fresh connection, written as is; resolves with the answer once it is whole or closed. */
function onTheWire(port: number, bytes: string, waitMs = 30_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = connect(port, "127.0.0.1");
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no whole answer in ${waitMs} ms; got ${JSON.stringify(text)}`));
    }, waitMs);
    const done = () => {
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const lines = text.slice(0, end).split("\r\n");
      const fields = new Map(
        lines.slice(1).map((line) => {
          const colon = line.indexOf(":");
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
        }),
      );
      const length = Number(fields.get("content-length") ?? -1);
      const body = text.slice(end + 4);
      if (length < 0 || Buffer.byteLength(body) < length) return false;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? "")?.[1]),
        headers: { get: (name) => fields.get(name.toLowerCase()) ?? null },
        body: JSON.parse(body),
      });
      return true;
    };
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      done();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      if (!done()) {
        clearTimeout(timer);
        reject(new Error(`closed without a whole answer: ${JSON.stringify(text)}`));
      }
    });
    socket.write(bytes);
  });
}

const wireHead = (method: string, path: string, headers: Record<string, string | number> = {}) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;

describe("X-Request-Id and request_id", () => {
  const t = useTestRefvid();
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await t.tenant(BUSY);
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    rawRequest(t.url, "GET", path, { headers });

  it.each<[string, { path: string; status: number }]>([
    ["the liveness probe", { path: "/healthz", status: 200 }],
    ["the readiness probe", { path: "/readyz", status: 200 }],
    ["the metrics", { path: "/metrics", status: 200 }],
    ["the API reference", { path: "/docs/", status: 200 }],
    ["the console", { path: "/console/", status: 200 }],
    ["a console route (its page)", { path: "/console/runs", status: 200 }],
  ])("is on every answer that is no error: %s", async (_name, { path, status }) => {
    expectRequestId(await get(path), status);
  });

  it("is on a redirect of a static directory (/docs to /docs/)", async () => {
    const res = await fetch(`${t.url}/docs`, { redirect: "manual" });
    await res.text();
    expect(res.headers.get("location")).toBe("/docs/");
    expectRequestId({ status: res.status, headers: res.headers, body: null }, 301);
  });

  it.each<[string, { request: () => Promise<Answer>; status: number; type: string }]>([
    ["an unknown route", { request: () => get("/nope"), status: 404, type: "not_found" }],
    ["a file missing under /docs", { request: () => get("/docs/nope.js"), status: 404, type: "not_found" }],
    [
      "a method the route does not take",
      { request: () => tenant.call("PUT", "/v1/account", {}), status: 405, type: "method_not_allowed" },
    ],
    ["no API key", { request: () => get("/v1/account"), status: 401, type: "unauthorized" }],
    [
      "a wrong admin token",
      {
        request: () => get("/admin/v1/organizations", { authorization: "Bearer not-the-admin-token-at-all" }),
        status: 401,
        type: "unauthorized",
      },
    ],
    [
      "a body that is not JSON (the body parser)",
      {
        request: () => tenant.call("POST", "/v1/runs/search", "{not json"),
        status: 400,
        type: "invalid_request",
      },
    ],
    [
      "a body over 512 KiB (the body reader)",
      {
        request: () => tenant.call("POST", "/v1/runs/search", { pad: "x".repeat(600 * 1024) }),
        status: 413,
        type: "payload_too_large",
      },
    ],
    [
      "a body of a media type the operation does not take",
      {
        request: () =>
          tenant.call("POST", "/v1/runs/search", "status=queued", { "content-type": "text/plain" }),
        status: 415,
        type: "unsupported_media_type",
      },
    ],
    [
      "an input the spec refuses (the validator)",
      {
        request: () => tenant.call("POST", `/v1/run/${D}`, { input: { prompt: "" } }),
        status: 400,
        type: "invalid_request",
      },
    ],
    [
      "an unknown run",
      { request: () => tenant.call("GET", "/v1/runs/run_nope"), status: 404, type: "run_not_found" },
    ],
  ])("is in the body of each error, as in the header: %s", async (_name, { request, status, type }) => {
    const res = await request();
    expectRequestId(res, status);
    expect(res.body.error.type).toBe(type);
  });

  it("is the client's own X-Request-Id when it is a safe token, in the header and the body", async () => {
    const res = await get("/v1/runs/run_nope", {
      authorization: `Key ${tenant.apiKey}`,
      "x-request-id": "trace-7f3a.01",
    });
    expect(expectRequestId(res, 404)).toBe("trace-7f3a.01");
    const unsafe = await get("/nope", { "x-request-id": "two words" });
    expect(expectRequestId(unsafe, 404)).toMatch(/^req_/);
  });

  it("is in the insufficient-balance 400", async () => {
    const poor = await t.tenant({ ...BUSY, balanceUsd: "0.10" });
    const res = await poor.call("POST", `/v1/run/${D}`, { input: quickD() });
    expectRequestId(res, 400);
    expect(res.body.error.type).toBe("insufficient_balance");
  });

  it("is beside `error` in the rate-limit 429, which keeps the interface's shape", async () => {
    const limited = await t.tenant({ rateLimitPerMinute: 1 });
    expect((await limited.call("GET", "/v1/account")).status).toBe(200);
    const res = await limited.call("GET", "/v1/account");
    const id = expectRequestId(res, 429);
    expect(res.body).toStrictEqual({
      error: "rate_limit_exceeded",
      message: expect.any(String),
      request_id: id,
    });
  });

  it("is inside `error` in the concurrency 429, beside the interface's fields", async () => {
    const capped = await t.tenant({ ...BUSY, maxConcurrency: 1 });
    try {
      expect((await capped.call("POST", `/v1/run/${D}`, { input: quickD(slow()) })).status).toBe(201);
      const res = await capped.call("POST", `/v1/run/${D}`, { input: quickD(slow()) });
      expectRequestId(res, 429);
      expectConcurrency429(res, "api_key", 1, 1);
    } finally {
      await cancelInFlight(capped.call);
    }
  });

  it("is on the answers Node's parser refuses: a header too large, bytes that are no request", async () => {
    const port = Number(new URL(t.url).port);
    const tooLarge = await onTheWire(
      port,
      wireHead("GET", "/healthz", { "x-padding": "x".repeat(64 * 1024) }),
    );
    expectRequestId(tooLarge, 431);
    expect(tooLarge.body.error.type).toBe("header_fields_too_large");
    const garbage = await onTheWire(port, "NOT AN HTTP REQUEST\r\n\r\n");
    expectRequestId(garbage, 400);
    expect(garbage.body.error.type).toBe("invalid_request");
  });
});

describe("X-Request-Id and request_id at the edge, on the probe port and while draining", () => {
  const t = useTestRefvid({
    REFVID_PROBE_PORT: "0",
    // A body must come at 4 KiB/s, judged over windows of 200 ms (after a first one of grace).
    REFVID_MIN_BODY_BYTES_PER_S: "4096",
    REFVID_MIN_BODY_WINDOW_MS: "200",
  });
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await t.tenant(BUSY);
  });

  it("is on the 408 of a body slower than the minimum rate (body-rate.ts)", async () => {
    const port = Number(new URL(t.url).port);
    const res = await onTheWire(
      port,
      `${wireHead("POST", "/v1/runs/search", {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "content-length": 100_000,
      })}{"status": [`,
    );
    expectRequestId(res, 408);
    expect(res.body.error).toMatchObject({ type: "request_timeout", code: 408 });
  });

  it("is on the probe port's answers, its 404 for the API included", async () => {
    const probe = t.refvid.probeUrl ?? "";
    expect(probe).not.toBe("");
    expectRequestId(await rawRequest(probe, "GET", "/healthz"), 200);
    expectRequestId(await rawRequest(probe, "GET", "/metrics"), 200);
    const api = await rawRequest(probe, "GET", "/v1/account", {
      headers: { authorization: `Key ${tenant.apiKey}` },
    });
    expectRequestId(api, 404);
  });

  // Last in the file: the drain begun here is finished by the harness's close.
  it("is on the 503 of a draining process and on its probes", async () => {
    t.refvid.drain.begin();
    const refused = await tenant.call("GET", "/v1/account");
    expectRequestId(refused, 503);
    expect(refused.body.error.type).toBe("service_unavailable");
    expectRequestId(await rawRequest(t.url, "GET", "/readyz"), 503, false);
    expectRequestId(await rawRequest(t.url, "GET", "/healthz"), 200);
  });
});
