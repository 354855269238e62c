import type { ServerResponse } from "node:http";
import type { Run } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { API_KEY, FAST_RETRY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { NotFoundError } from "./errors.js";

const event = (res: ServerResponse, name: "run" | "done", run: Run) =>
  res.write(`id: ${run.status}:${run.progress ?? ""}\nevent: ${name}\ndata: ${JSON.stringify(run)}\n\n`);
const openStream = (res: ServerResponse) =>
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });

const statuses = async (runs: AsyncIterable<Run>) => {
  const seen: string[] = [];
  for await (const run of runs) seen.push(`${run.status}:${run.progress ?? ""}`);
  return seen;
};

describe("streamRun", () => {
  it("yields each event's run, ignoring comments, and ends with the terminal one", async () => {
    const server = await startServer((_req, res) => {
      openStream(res);
      event(res, "run", makeRun({ status: "queued", progress: null }));
      res.write(": keep-alive\n\n");
      event(res, "run", makeRun({ status: "processing", progress: 0.5 }));
      event(res, "done", makeRun({ status: "succeeded", progress: 1 }));
      res.end();
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    expect(await statuses(client.streamRun("run_1"))).toEqual(["queued:", "processing:0.5", "succeeded:1"]);
    expect(server.requests[0]).toMatchObject({ method: "GET", url: "/v1/runs/run_1/events" });
    expect(server.requests[0]?.headers.accept).toBe("text/event-stream");
  });

  it("resumes a dropped stream with Last-Event-ID", async () => {
    const server = await startServer((req, res, i) => {
      openStream(res);
      if (i === 0) {
        event(res, "run", makeRun({ status: "processing", progress: 0.3 }));
        setTimeout(() => res.socket?.destroy(), 20); // the connection breaks mid-run
        return;
      }
      expect(req.headers["last-event-id"]).toBe("processing:0.3");
      event(res, "done", makeRun({ status: "succeeded", progress: 1 }));
      res.end();
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    expect(await statuses(client.streamRun("run_1"))).toEqual(["processing:0.3", "succeeded:1"]);
    expect(server.requests).toHaveLength(2);
  });

  it("polls a server that has no event stream (its generic 404)", async () => {
    const states = [
      makeRun({ status: "processing", progress: 0.1 }),
      makeRun({ status: "succeeded", progress: 1 }),
    ];
    let polls = 0;
    const server = await startServer((req, res) => {
      if (req.url.endsWith("/events")) {
        return sendJson(res, 404, { error: { type: "not_found", code: 404, message: "No route" } });
      }
      sendJson(res, 200, states[Math.min(polls++, 1)]);
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    expect(await statuses(client.streamRun("run_1", { pollIntervalMs: 5 }))).toEqual([
      "processing:0.1",
      "succeeded:1",
    ]);
  });

  it("rejects with NotFoundError for an unknown run, without polling", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 404, { error: { type: "run_not_found", code: 404, message: "No run run_x" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(statuses(client.streamRun("run_x"))).rejects.toBeInstanceOf(NotFoundError);
    expect(server.requests).toHaveLength(1);
  });
});

describe("run() with onProgress", () => {
  it("follows the run's stream and reports every state", async () => {
    const server = await startServer((req, res) => {
      if (req.method === "POST") return sendJson(res, 201, makeRun({ status: "queued" }));
      openStream(res);
      event(res, "run", makeRun({ status: "processing", progress: 0.4 }));
      event(res, "done", makeRun({ status: "succeeded", progress: 1 }));
      res.end();
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const seen: string[] = [];
    const run = await client.run(
      "lab-a/model-a/reference-to-video",
      { prompt: "p" },
      { onProgress: (r) => seen.push(`${r.status}:${r.progress ?? ""}`) },
    );
    expect(run.status).toBe("succeeded");
    expect(seen).toEqual(["processing:0.4", "succeeded:1"]);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "POST /v1/run/lab-a/model-a/reference-to-video",
      `GET /v1/runs/${run.run_id}/events`,
    ]);
  });
});
