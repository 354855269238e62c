import type { RunStatus } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { API_KEY, makeRun, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { RunFailedError } from "./errors.js";

const SLUG = "lab-d/model-d/reference-to-video";
const INPUT = { prompt: "x", image_urls: ["https://example.com/a.png"] };

/** A server where the submit queues the run and the first poll finds it ended with `status`. */
async function endingServer(status: RunStatus) {
  const ended = makeRun({
    status,
    error: status === "succeeded" ? null : { type: "provider_error", code: 502, message: "upstream failed" },
    completed_at: "2025-01-01T00:00:09.000Z",
  });
  const server = await startServer((req, res) => {
    if (req.method === "POST") sendJson(res, 201, makeRun());
    else sendJson(res, 200, ended);
  });
  return { client: createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY }), server, ended };
}

describe("run", () => {
  it.each(["failed", "timeout"] as const)(
    "rejects with RunFailedError carrying the run when it ends %s",
    async (status) => {
      const { client, ended } = await endingServer(status);
      const error = await client.run(SLUG, INPUT, { pollIntervalMs: 5 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunFailedError);
      expect(error).toMatchObject({ run: ended });
      expect((error as Error).message).toBe(
        `run ${ended.run_id} ended ${status}: upstream failed (provider_error)`,
      );
    },
  );

  it.each(["failed", "timeout"] as const)(
    "resolves with the %s run when throwOnFailure is false",
    async (status) => {
      const { client, ended } = await endingServer(status);
      await expect(client.run(SLUG, INPUT, { pollIntervalMs: 5, throwOnFailure: false })).resolves.toEqual(
        ended,
      );
    },
  );

  it("resolves with a cancelled run, since cancelling is deliberate", async () => {
    const { client } = await endingServer("cancelled");
    await expect(client.run(SLUG, INPUT, { pollIntervalMs: 5 })).resolves.toMatchObject({
      status: "cancelled",
    });
  });

  it("rejects a sync submit's failed run without polling", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, makeRun({ status: "failed" })));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.run(SLUG, INPUT, { sync: true })).rejects.toBeInstanceOf(RunFailedError);
    expect(server.requests).toHaveLength(1);
  });

  it("leaves waitForRun returning failed runs", async () => {
    const { client } = await endingServer("failed");
    await expect(client.waitForRun("run_1")).resolves.toMatchObject({ status: "failed" });
  });
});
