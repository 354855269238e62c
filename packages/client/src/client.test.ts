import { describe, expect, it } from "vitest";
import { API_KEY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";

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
      // @ts-expect-error not a model slug
      client.previewPrice("lab-x/model-x/reference-to-video", { prompt: "x" }),
    ];
    expect(misuse).toBeTypeOf("function");
  });

  it("refuses to start without an API key", () => {
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
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun({ status: "failed" })));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.run(SLUG, { prompt: "x" }, { sync: true })).resolves.toMatchObject({
      status: "failed",
    });
    expect(server.requests).toHaveLength(1);
  });
});
