/**
 * SIGTERM on one of two API processes on Postgres, with the runs on a worker process
 * (docs/decisions.md, "Shutdown"): the stopping API process keeps its held sync submits until
 * the worker ends their runs and answers them with the terminal runs; a run longer than the drain
 * is answered as it stands; a client following a run through a load balancer is sent
 * `going_away` and resumes on the other API process, to the run's end.
 */
import { createRefvidClient } from "@refvid/client";
import { type TestDatabases, testDatabases } from "@refvid/store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FailoverProxy, failoverProxy } from "./failover-proxy.js";
import { exitCode, expectAnswered, holdSync, runOf, tenant, untilRuns } from "./held-requests.js";
import { type Fleet, fleet } from "./processes.js";

let databases: TestDatabases;
let processes: Fleet;
let proxy: FailoverProxy | undefined;

beforeAll(async () => {
  databases = await testDatabases();
  processes = await fleet({ DATABASE_URL: await databases.create() });
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await processes?.stopAll();
  await databases?.destroy();
}, 60_000);

describe("SIGTERM on an API process beside another, with the runs on a worker", () => {
  it("answers held sync submits when the worker ends their runs, and moves a followed stream to the other process", async () => {
    const stopping = await processes.start("api", { REFVID_DRAIN_MS: "8000" });
    const other = await processes.start("api");
    await processes.start("worker", { REFVID_WORKER_CONCURRENCY: "30" });
    proxy = await failoverProxy([stopping.port, other.port]);
    const key = await tenant(stopping, processes.adminToken);

    const held = await Promise.all(
      Array.from({ length: 20 }, (_, i) => holdSync(stopping.url, key, `held ${i} [simulate:delay=2000]`)),
    );
    const long = await holdSync(stopping.url, key, "long [simulate:delay=15000]");
    expect([...held, long].map((h) => h.status)).toEqual(Array(21).fill(201));
    // A client following the long run through the proxy, which sends it to `stopping` for now.
    const client = createRefvidClient({ baseUrl: proxy.url, apiKey: key });
    const seen: string[] = [];
    let following: () => void = () => {};
    const followed = new Promise<void>((resolve) => {
      following = resolve;
    });
    const followedToEnd = (async () => {
      for await (const run of client.streamRun(long.runId)) {
        seen.push(run.status);
        following();
      }
    })();
    await followed;
    const all = [...held, long];
    await untilRuns(
      other,
      key,
      all,
      (runs) => runs.every((r) => r.status !== "queued"),
      "every run on the worker",
    );

    stopping.child.kill("SIGTERM");
    await expectAnswered(held, ["succeeded"]);
    expect(await long.body).toMatchObject({ ok: true, json: { run_id: long.runId, status: "processing" } });
    expect(await exitCode(stopping)).toBe(0);

    await followedToEnd;
    expect(seen[seen.length - 1]).toBe("succeeded");
    expect(proxy.connections).toContain(other.port);
    expect(await runOf(other, key, long.runId)).toMatchObject({ status: "succeeded" });
  }, 120_000);
});
