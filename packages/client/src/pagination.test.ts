import type { Run, RunPage } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { API_KEY, makeRun, sendJson, startServer, type TestServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import type { RunFilters } from "./pagination.js";

const runId = (n: number) => `run_00000000-0000-4000-8000-00000000000${n}`;

/** Three pages of runs 1-2, 3-4 and 5, chained by cursors c1 and c2. */
const PAGES: Record<string, RunPage> = {
  "": {
    data: [makeRun({ run_id: runId(1) }), makeRun({ run_id: runId(2) })],
    has_more: true,
    next_cursor: "c1",
  },
  c1: {
    data: [makeRun({ run_id: runId(3) }), makeRun({ run_id: runId(4) })],
    has_more: true,
    next_cursor: "c2",
  },
  c2: { data: [makeRun({ run_id: runId(5) })], has_more: false, next_cursor: null },
};

const FILTERS: RunFilters = { status: ["succeeded"], endpoint: "lab-a/model-a/reference-to-video", limit: 2 };

async function pagedServer(): Promise<TestServer> {
  return startServer((req, res) => {
    const { cursor = "" } = JSON.parse(req.body) as { cursor?: string };
    const page = PAGES[cursor];
    if (page) sendJson(res, 201, page);
    else
      sendJson(res, 400, {
        error: { type: "invalid_request", code: 400, message: "bad cursor", fields: [] },
      });
  });
}

function sentBodies(server: TestServer): unknown[] {
  return server.requests.map((r) => JSON.parse(r.body));
}

describe("pagination", () => {
  it("iterateRuns walks 3 pages, sending each next_cursor back with the same filters", async () => {
    const server = await pagedServer();
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const ids: string[] = [];
    for await (const run of client.iterateRuns(FILTERS)) ids.push(run.run_id);
    expect(ids).toEqual([1, 2, 3, 4, 5].map(runId));
    expect(server.requests.every((r) => r.method === "POST" && r.url === "/v1/runs/search")).toBe(true);
    expect(sentBodies(server)).toEqual([FILTERS, { ...FILTERS, cursor: "c1" }, { ...FILTERS, cursor: "c2" }]);
  });

  it("iterateRunPages yields each page as returned", async () => {
    const server = await pagedServer();
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const pages: RunPage[] = [];
    for await (const page of client.iterateRunPages(FILTERS)) pages.push(page);
    expect(pages).toEqual([PAGES[""], PAGES.c1, PAGES.c2]);
  });

  it("searchAll collects every run", async () => {
    const server = await pagedServer();
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const runs: Run[] = await client.searchAll(FILTERS);
    expect(runs.map((r) => r.run_id)).toEqual([1, 2, 3, 4, 5].map(runId));
    expect(server.requests).toHaveLength(3);
  });

  it("fetches no further page once the loop breaks", async () => {
    const server = await pagedServer();
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    for await (const run of client.iterateRuns(FILTERS)) {
      expect(run.run_id).toBe(runId(1));
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it("stops with an error when the server repeats a cursor instead of looping forever", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 201, { data: [makeRun()], has_more: true, next_cursor: "same" }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.searchAll()).rejects.toThrow(/same cursor/);
    expect(server.requests).toHaveLength(2);
  });
});
