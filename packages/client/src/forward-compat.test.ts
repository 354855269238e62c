/**
 * A newer server must never break this client: a run status, a model and fields it does not
 * know flow through every method unchanged. These responses are raw JSON on purpose: the types
 * cannot describe them, which is the point.
 */
import { describe, expect, it } from "vitest";
import { API_KEY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { isTerminal } from "./wait.js";

const FUTURE_SLUG = "lab-e/model-e/reference-to-video";
const DONE_AT = "2025-01-01T00:01:00.000Z";

/** A run as a newer server might send it: a fifth model, a sixth status, fields added. */
function futureRun(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...makeRun(),
    endpoint: FUTURE_SLUG,
    status: "archived",
    completed_at: DONE_AT,
    region: "eu-west-1",
    billing: { amount: "0.00", currency: "usd", billable_seconds: 0, tax_usd: "0.00" },
    ...overrides,
  };
}

describe("responses from a newer server", () => {
  it("getRun returns a run with an unknown status, model and fields as sent", async () => {
    const run = futureRun();
    const server = await startServer((_req, res) => sendJson(res, 200, run));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.getRun("run_1")).resolves.toEqual(run);
  });

  it("search and pagination pass unknown runs and page fields through", async () => {
    const first = futureRun({ run_id: "run_1" });
    const second = futureRun({ run_id: "run_2", status: "preparing", completed_at: null });
    const server = await startServer((req, res) => {
      const { cursor } = JSON.parse(req.body) as { cursor?: string };
      if (cursor === undefined) {
        sendJson(res, 201, { data: [first], has_more: true, next_cursor: "c1", total_estimate: 2 });
      } else sendJson(res, 201, { data: [second], has_more: false, next_cursor: null, total_estimate: 2 });
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.searchRuns()).resolves.toMatchObject({ data: [first], total_estimate: 2 });
    await expect(client.searchAll({ status: ["succeeded"] })).resolves.toEqual([first, second]);
  });

  it("waitForRun waits through an unknown in-flight status and stops at an unknown ended one", async () => {
    const states = [
      futureRun({ status: "queued", completed_at: null }),
      futureRun({ status: "preparing", completed_at: null }),
      futureRun({ status: "preparing", completed_at: null, progress: 0.1 }),
      futureRun({ status: "archived", completed_at: DONE_AT }),
    ];
    const server = await startServer((_req, res, i) => sendJson(res, 200, states[i]));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const seen: unknown[] = [];
    const run = await client.waitForRun("run_1", {
      pollIntervalMs: 5,
      onUpdate: (r) => seen.push(r.status),
    });
    expect(run).toEqual(states[3]);
    expect(seen).toEqual(["queued", "preparing", "preparing", "archived"]);
    expect(server.requests).toHaveLength(4);
  });

  it("run resolves for a model and an ended status this client does not know", async () => {
    const ended = futureRun();
    const server = await startServer((req, res) => {
      if (req.method === "POST") sendJson(res, 201, futureRun({ status: "queued", completed_at: null }));
      else sendJson(res, 200, ended);
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    // The slug type only knows four models; a caller on a newer server casts to reach a fifth.
    const slug = FUTURE_SLUG as "lab-a/model-a/reference-to-video";
    await expect(client.run(slug, { prompt: "x" }, { pollIntervalMs: 5 })).resolves.toEqual(ended);
    expect(server.requests[0]?.url).toBe(`/v1/run/${FUTURE_SLUG}`);
  });

  it("an unknown error type is still a typed error with its code and request id", async () => {
    const server = await startServer((_req, res) =>
      sendJson(
        res,
        422,
        { error: { type: "content_moderated", code: 422, message: "no", policy: "p1" } },
        { "x-request-id": "req_new" },
      ),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.getRun("run_1")).rejects.toMatchObject({
      name: "RefvidError",
      status: 422,
      type: "content_moderated",
      requestId: "req_new",
    });
  });
});

describe("isTerminal with a status newer than this client", () => {
  it.each([
    { status: "archived", completed_at: DONE_AT, expected: true },
    { status: "archived", completed_at: null, expected: false },
    { status: "preparing", completed_at: undefined, expected: false },
    // A known status decides by itself.
    { status: "processing", completed_at: DONE_AT, expected: false },
    { status: "failed", completed_at: null, expected: true },
  ])("$status with completed_at $completed_at: $expected", ({ status, completed_at, expected }) => {
    const run = { status, completed_at } as unknown as Parameters<typeof isTerminal>[0];
    expect(isTerminal(run)).toBe(expected);
  });
});
