import type { Account, Run, RunPage } from "@refvid/api-types";
import { afterEach, describe, expect, expectTypeOf, it, onTestFinished, vi } from "vitest";
import { API_KEY, makeRun, sendJson, startServer } from "../test/server.js";
import type { WithResponse } from "./api-promise.js";
import { createRefvidClient, type RefvidClient } from "./client.js";
import { readEnv } from "./env.js";

const SLUG = "lab-a/model-a/reference-to-video";

describe("authentication", () => {
  it.each([
    { authScheme: undefined, expected: `Key ${API_KEY}` },
    { authScheme: "Key" as const, expected: `Key ${API_KEY}` },
    { authScheme: "Bearer" as const, expected: `Bearer ${API_KEY}` },
  ])("sends Authorization as $expected for authScheme $authScheme", async ({ authScheme, expected }) => {
    const server = await startServer((_req, res) => sendJson(res, 200, { secret: "whsec_AAAA" }));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, authScheme });
    await client.getWebhookSecret();
    expect(server.requests[0]?.headers.authorization).toBe(expected);
  });

  it("sends a default User-Agent, or the caller's", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, { secret: "whsec_AAAA" }));
    await createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY }).getWebhookSecret();
    await createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      userAgent: "my-app/2",
    }).getWebhookSecret();
    expect(server.requests.map((r) => r.headers["user-agent"])).toEqual(["refvid-client", "my-app/2"]);
  });

  it("types submit input by model slug", () => {
    const client = createRefvidClient({ baseUrl: "http://127.0.0.1:9", apiKey: API_KEY });
    // Never called: the assertions are the @ts-expect-error lines, checked by `tsc --noEmit`.
    const misuse = () => [
      // @ts-expect-error model-d requires image_urls
      client.submit("lab-d/model-d/reference-to-video", { prompt: "x" }),
      // @ts-expect-error model-a durations are "auto" or "4".."30", not "4s"
      client.submit("lab-a/model-a/reference-to-video", { prompt: "x", duration: "4s" }),
      // @ts-expect-error model-b's seed is a number
      client.previewPrice("lab-b/model-b/reference-to-video", { prompt: "x", seed: "7" }),
      // @ts-expect-error model-c requires reference_image_urls
      client.run("lab-c/model-c/reference-to-video", { prompt: "x" }),
    ];
    expect(misuse).toBeTypeOf("function");
  });

  it("refuses to start with an empty API key, whatever the environment says", () => {
    onTestFinished(() => {
      vi.unstubAllEnvs();
    });
    vi.stubEnv("REFVID_API_KEY", "sk-test-from-env");
    expect(() => createRefvidClient({ baseUrl: "http://127.0.0.1", apiKey: "" })).toThrow(TypeError);
  });
});

describe("helpers", () => {
  it("submit posts the input and options to the model's path and returns the run", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 201, makeRun({ metadata: { order: "7" } }), { location: "/v1/runs/run_1" }),
    );
    const client = createRefvidClient({ baseUrl: `${server.baseUrl}/`, apiKey: API_KEY });
    const run = await client.submit(
      "lab-d/model-d/reference-to-video",
      { prompt: "a dolly shot", image_urls: ["https://example.com/a.png"], duration: "4s" },
      { webhookUrl: "https://example.com/hook", sync: false, metadata: { order: "7" } },
    );
    expect(run.metadata).toEqual({ order: "7" });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", url: "/v1/run/lab-d/model-d/reference-to-video" });
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request?.body ?? "")).toEqual({
      input: { prompt: "a dolly shot", image_urls: ["https://example.com/a.png"], duration: "4s" },
      webhook_url: "https://example.com/hook",
      sync: false,
      metadata: { order: "7" },
    });
  });

  it.each([
    {
      name: "getRun",
      call: (c: ReturnType<typeof createRefvidClient>) => c.getRun("run_a/b"),
      method: "GET",
      url: "/v1/runs/run_a%2Fb",
      body: "",
    },
    {
      name: "cancelRun",
      call: (c: ReturnType<typeof createRefvidClient>) => c.cancelRun("run_1"),
      method: "POST",
      url: "/v1/runs/run_1/cancel",
      body: "",
    },
    {
      name: "getAccount",
      call: (c: ReturnType<typeof createRefvidClient>) => c.getAccount(),
      method: "GET",
      url: "/v1/account",
      body: "",
    },
    {
      name: "getWebhookSecret",
      call: (c: ReturnType<typeof createRefvidClient>) => c.getWebhookSecret(),
      method: "GET",
      url: "/v1/webhooks/secret",
      body: "",
    },
    {
      name: "previewPrice",
      call: (c: ReturnType<typeof createRefvidClient>) =>
        c.previewPrice(SLUG, { prompt: "x", duration: "5" }),
      method: "POST",
      url: "/v1/pricing/preview",
      body: JSON.stringify({ endpoint: SLUG, input: { prompt: "x", duration: "5" } }),
    },
    {
      name: "searchRuns",
      call: (c: ReturnType<typeof createRefvidClient>) => c.searchRuns({ status: ["failed"], limit: 5 }),
      method: "POST",
      url: "/v1/runs/search",
      body: JSON.stringify({ status: ["failed"], limit: 5 }),
    },
  ])("$name sends $method $url and returns the parsed body", async ({ call, method, url, body }) => {
    const answer = { ok: true };
    const server = await startServer((_req, res) => sendJson(res, method === "POST" ? 201 : 200, answer));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(call(client)).resolves.toEqual(answer);
    expect(server.requests[0]).toMatchObject({ method, url, body });
  });

  it("run submits, then polls until the run is terminal", async () => {
    const states = [
      makeRun({ status: "processing", progress: 0.5 }),
      makeRun({ status: "succeeded", progress: 1 }),
    ];
    const server = await startServer((req, res, i) => {
      if (req.method === "POST") sendJson(res, 201, makeRun());
      else sendJson(res, 200, states[Math.min(i - 1, states.length - 1)]);
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const seen: string[] = [];
    const run = await client.run(
      SLUG,
      { prompt: "x" },
      { pollIntervalMs: 5, onUpdate: (r) => seen.push(r.status) },
    );
    expect(run.status).toBe("succeeded");
    expect(seen).toEqual(["queued", "processing", "succeeded"]);
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "GET", "GET"]);
  });

  it("run with sync: true returns the terminal run without polling", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun({ status: "succeeded" })));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.run(SLUG, { prompt: "x" }, { sync: true })).resolves.toMatchObject({
      status: "succeeded",
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe("configuration", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("reads REFVID_BASE_URL and REFVID_API_KEY when the options are left out", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, { secret: "whsec_AAAA" }));
    vi.stubEnv("REFVID_BASE_URL", server.baseUrl);
    vi.stubEnv("REFVID_API_KEY", "sk-test-from-env");
    await createRefvidClient().getWebhookSecret();
    expect(server.requests[0]?.headers.authorization).toBe("Key sk-test-from-env");
  });

  it("prefers the options to the environment", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, { secret: "whsec_AAAA" }));
    vi.stubEnv("REFVID_BASE_URL", "http://127.0.0.1:9");
    vi.stubEnv("REFVID_API_KEY", "sk-test-from-env");
    await createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY }).getWebhookSecret();
    expect(server.requests[0]?.headers.authorization).toBe(`Key ${API_KEY}`);
  });

  it("names the option and the variable when neither gives an API key or a base URL", () => {
    vi.stubEnv("REFVID_BASE_URL", "");
    vi.stubEnv("REFVID_API_KEY", "");
    expect(() => createRefvidClient({ baseUrl: "http://127.0.0.1:9" })).toThrow(
      /pass \{ apiKey \} to createRefvidClient or set REFVID_API_KEY/,
    );
    expect(() => createRefvidClient({ apiKey: API_KEY })).toThrow(
      /pass \{ baseUrl \} to createRefvidClient or set REFVID_BASE_URL/,
    );
  });

  it("reads no environment where there is none, or where reading it is refused", () => {
    expect(readEnv("REFVID_API_KEY", {})).toBeUndefined();
    expect(readEnv("REFVID_API_KEY", { process: {} })).toBeUndefined();
    const denied = {
      process: {
        get env(): never {
          throw new Error("PermissionDenied: requires env access"); // as Deno without --allow-env
        },
      },
    };
    expect(readEnv("REFVID_API_KEY", denied)).toBeUndefined();
    expect(readEnv("REFVID_API_KEY", { process: { env: { REFVID_API_KEY: "sk-x" } } })).toBe("sk-x");
  });
});

describe("withResponse", () => {
  it("gives the data with the HTTP response and its request id, from the one request", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 201, makeRun(), { "x-request-id": "req_submit", "idempotent-replayed": "true" }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const call = client.submit(SLUG, { prompt: "x" });
    expect(call).toBeInstanceOf(Promise);
    const { data, response, requestId } = await call.withResponse();
    expect(data).toEqual(makeRun());
    expect(requestId).toBe("req_submit");
    expect(response.status).toBe(201);
    expect(response.headers.get("idempotent-replayed")).toBe("true");
    // Awaiting the same call gives the same data without sending it again.
    await expect(call).resolves.toEqual(makeRun());
    expect(server.requests).toHaveLength(1);
  });

  it("rejects with the typed error, which carries the request id", async () => {
    const server = await startServer((_req, res) =>
      sendJson(
        res,
        404,
        { error: { type: "run_not_found", code: 404, message: "no such run", request_id: "req_body" } },
        { "x-request-id": "req_header" },
      ),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.getRun("run_1").withResponse()).rejects.toMatchObject({
      name: "NotFoundError",
      requestId: "req_header",
    });
  });

  it("types the data by method", () => {
    expectTypeOf<Awaited<ReturnType<RefvidClient["getRun"]>>>().toEqualTypeOf<Run>();
    expectTypeOf<Awaited<ReturnType<ReturnType<RefvidClient["getRun"]>["withResponse"]>>>().toEqualTypeOf<
      WithResponse<Run>
    >();
    expectTypeOf<Awaited<ReturnType<RefvidClient["searchRuns"]>>>().toEqualTypeOf<RunPage>();
    expectTypeOf<Awaited<ReturnType<RefvidClient["getAccount"]>>>().toEqualTypeOf<Account>();
  });
});
