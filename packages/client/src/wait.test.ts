import type { Run } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { API_KEY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { RunTimeoutError } from "./errors.js";
import { isTerminal } from "./wait.js";

describe("isTerminal", () => {
  it.each([
    { status: "queued", expected: false },
    { status: "processing", expected: false },
    { status: "succeeded", expected: true },
    { status: "failed", expected: true },
    { status: "timeout", expected: true },
    { status: "cancelled", expected: true },
  ] as const)("$status is terminal: $expected", ({ status, expected }) => {
    expect(isTerminal({ status })).toBe(expected);
  });
});

describe("waitForRun", () => {
  it("polls until terminal, reporting each change through onUpdate", async () => {
    const states: Run[] = [
      makeRun({ status: "queued" }),
      makeRun({ status: "queued" }),
      makeRun({ status: "processing", progress: 0.2 }),
      makeRun({ status: "processing", progress: 0.8 }),
      makeRun({ status: "succeeded", progress: 1 }),
    ];
    const server = await startServer((_req, res, i) => sendJson(res, 200, states[i]));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const updates: Array<[string, number | null]> = [];
    const run = await client.waitForRun("run_1", {
      pollIntervalMs: 5,
      maxPollIntervalMs: 10,
      onUpdate: (r) => updates.push([r.status, r.progress]),
    });
    expect(run.status).toBe("succeeded");
    expect(server.requests).toHaveLength(5);
    expect(server.requests.every((r) => r.method === "GET" && r.url === "/v1/runs/run_1")).toBe(true);
    // The repeated "queued" is not reported again: onUpdate fires on changes only.
    expect(updates).toEqual([
      ["queued", null],
      ["processing", 0.2],
      ["processing", 0.8],
      ["succeeded", 1],
    ]);
  });

  it("returns a failed run rather than throwing", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, makeRun({ status: "failed" })));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.waitForRun("run_1")).resolves.toMatchObject({ status: "failed" });
  });

  it("spaces polls out, growing the interval up to maxPollIntervalMs", async () => {
    const server = await startServer((_req, res, i) =>
      sendJson(res, 200, makeRun({ status: i < 4 ? "processing" : "succeeded" })),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await client.waitForRun("run_1", { pollIntervalMs: 40, maxPollIntervalMs: 60 });
    const times = server.requests.map((r) => r.receivedAt);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
    // Intervals 40, 60 (40 * 1.5), 60 (capped), 60; a little slack for timer granularity.
    expect(gaps).toHaveLength(4);
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    for (const gap of gaps.slice(1)) expect(gap).toBeGreaterThanOrEqual(58);
  });

  it("throws RunTimeoutError with the last state seen when timeoutMs passes", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 200, makeRun({ status: "processing", progress: 0.1 })),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const started = performance.now();
    const error = await client
      .waitForRun("run_1", { timeoutMs: 120, pollIntervalMs: 20 })
      .catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(RunTimeoutError);
    expect(error).toMatchObject({ runId: "run_1", timeoutMs: 120, lastRun: { status: "processing" } });
    expect(elapsed).toBeGreaterThanOrEqual(110);
    expect(elapsed).toBeLessThan(1000);
  });

  it("times out while a poll is still in flight, without waiting for its response", async () => {
    const server = await startServer((_req, res) => {
      setTimeout(() => sendJson(res, 200, makeRun({ status: "processing" })), 2000);
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const started = performance.now();
    const error = await client.waitForRun("run_1", { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunTimeoutError);
    expect(error).toMatchObject({ lastRun: undefined });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("rejects with AbortError when the signal aborts, and stops polling", async () => {
    // Abort once the second poll has been answered: driven by the server, not by a timer.
    const controller = new AbortController();
    let answered = 0;
    const server = await startServer((_req, res) => {
      sendJson(res, 200, makeRun({ status: "processing" }));
      answered += 1;
      if (answered === 2) controller.abort();
    });
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const updates: string[] = [];
    const error = await client
      .waitForRun("run_1", {
        signal: controller.signal,
        timeoutMs: 5000,
        pollIntervalMs: 10,
        onUpdate: (r) => updates.push(r.status),
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "AbortError" });
    expect(updates).toEqual(["processing"]);
    const polls = server.requests.length;
    expect(polls).toBeGreaterThan(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests).toHaveLength(polls);
  });

  it("rejects at once when the signal is already aborted", async () => {
    const server = await startServer((_req, res) => sendJson(res, 200, makeRun()));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.waitForRun("run_1", { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(server.requests).toHaveLength(0);
  });
});
