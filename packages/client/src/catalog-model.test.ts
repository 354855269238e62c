/**
 * A model the operator's catalog adds (any `<lab>/<model>/<category>` the server lists): the client
 * submits it through the generic path, prices it with its plain input, and runs it to its end, as
 * it does a built-in model; only the built-in models' inputs are typed.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { API_KEY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient, type RefvidClient } from "./client.js";
import type { AnyModelInput } from "./client-types.js";

const SLUG = "acme/clip-maker-1.5/image-to-video";
const INPUT = { prompt: "a paper boat", start_frames: ["https://example.com/a.png"], seconds: 4, loop: true };

describe("a catalog model", () => {
  it("is submitted to /v1/run/<slug> with its input as given and an Idempotency-Key", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun({ endpoint: SLUG })));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const run = await client.submit(SLUG, INPUT, { metadata: { order: "7" } });
    expect(run.endpoint).toBe(SLUG);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", url: `/v1/run/${SLUG}` });
    expect(request?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(request?.body ?? "")).toEqual({ input: INPUT, metadata: { order: "7" } });
  });

  it("is priced with { endpoint, input }", async () => {
    const price = {
      endpoint: SLUG,
      currency: "usd",
      unit_price: "0.20",
      billable_seconds: 4,
      amount: "0.80",
      price_tier: "anime",
    };
    const server = await startServer((_req, res) => sendJson(res, 200, price));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.previewPrice(SLUG, INPUT)).resolves.toEqual(price);
    expect(server.requests[0]).toMatchObject({ method: "POST", url: "/v1/pricing/preview" });
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ endpoint: SLUG, input: INPUT });
  });

  it("runs to its end: submitted, then polled", async () => {
    const ended = makeRun({ endpoint: SLUG, status: "succeeded", completed_at: "2025-01-01T00:00:04.000Z" });
    const server = await startServer((req, res) =>
      req.method === "POST" ? sendJson(res, 201, makeRun({ endpoint: SLUG })) : sendJson(res, 200, ended),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.run(SLUG, INPUT, { pollIntervalMs: 5 })).resolves.toEqual(ended);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `POST /v1/run/${SLUG}`,
      `GET /v1/runs/${ended.run_id}`,
    ]);
  });

  it("takes a slug known only at run time, as a tool that lists the models has it", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun()));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const listed: { slug: string; input: Record<string, unknown> } = { slug: SLUG, input: INPUT };
    await client.submit(listed.slug, listed.input);
    expect(server.requests[0]?.url).toBe(`/v1/run/${SLUG}`);
  });

  it("rejects a slug that is not <lab>/<model>/<category> without sending it", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun()));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.submit("acme/clip-maker", INPUT)).rejects.toThrow(
      'model slug must be <lab>/<model>/<category>, got "acme/clip-maker"',
    );
    expect(server.requests).toEqual([]);
  });

  it("takes a plain object input, while a built-in model's input stays typed", () => {
    const client: RefvidClient = createRefvidClient({ baseUrl: "http://127.0.0.1:9", apiKey: API_KEY });
    expectTypeOf(INPUT).toExtend<AnyModelInput>();
    // Never called: the assertions are the @ts-expect-error lines, checked by `tsc --noEmit`.
    const misuse = () => [
      client.submit(SLUG, { anything: ["goes", 1, true] }),
      client.previewPrice(SLUG, {}),
      client.run(SLUG, INPUT),
      // @ts-expect-error an input is a JSON object, not a string
      client.submit(SLUG, "a paper boat"),
      // @ts-expect-error nor a list
      client.previewPrice(SLUG, ["a paper boat"]),
      // @ts-expect-error a built-in slug takes its own input, not any object: model-d needs image_urls
      client.run("lab-d/model-d/reference-to-video", { prompt: "x", seconds: 4 }),
    ];
    expect(misuse).toBeTypeOf("function");
  });
});
