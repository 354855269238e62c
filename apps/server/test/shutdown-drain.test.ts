/**
 * SIGTERM drains a process that holds requests (docs/decisions.md, "Shutdown"): real processes
 * (the built server) on PGlite and memory. Sync submits held when the signal comes get their
 * terminal runs if the runs end within REFVID_DRAIN_MS, else the run as it stands, always as a
 * whole JSON body; event streams get their `done` or a `going_away` event and a clean close; new
 * connections are refused, and a request that still arrives is answered 503; the process exits 0
 * and the runs it had in hand are taken up again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./harness.js";
import {
  exitCode,
  expectAnswered,
  holdSync,
  refusesConnections,
  tenant,
  unfinishedRequest,
  untilRuns,
} from "./held-requests.js";
import { type Fleet, fleet, type RefvidProcess } from "./processes.js";
import { type SseEvent, stream } from "./sse.js";

let dir: string;
let processes: Fleet;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-drain-"));
  processes = await fleet({});
});

afterAll(async () => {
  await processes?.stopAll();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

/** A stream held open: resolves with its events once the server ends it (rejects on a reset). */
function holdStream(p: RefvidProcess, apiKey: string, runId: string) {
  let opened: () => void = () => {};
  const first = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const ended = stream(p.url, apiKey, runId, {
    until: (events) => {
      if (events.length > 0) opened();
      return false;
    },
  });
  return { first, ended };
}

const lastEvent = (events: SseEvent[]) => events[events.length - 1];

describe("SIGTERM on a process holding requests", () => {
  it("answers held sync submits with their terminal runs when the runs end within the drain, and streams with done", async () => {
    const p = await processes.start("all", {
      REFVID_STORE: `pglite:${join(dir, "within")}`,
      REFVID_WORKER_CONCURRENCY: "20",
    });
    const key = await tenant(p, processes.adminToken);
    const held = await Promise.all(
      Array.from({ length: 20 }, (_, i) => holdSync(p.url, key, `held ${i} [simulate:delay=4000]`)),
    );
    expect(held.map((h) => h.status)).toEqual(Array(20).fill(201));
    const followed = holdStream(p, key, held[0]?.runId as string);
    await followed.first;
    // Every run in hand before the signal (the worker takes no new runs once it has come).
    await untilRuns(p, key, held, (runs) => runs.every((r) => r.status !== "queued"), "every run in hand");

    p.child.kill("SIGTERM");
    await expectAnswered(held, ["succeeded"]);
    const { events } = await followed.ended;
    expect(lastEvent(events)).toMatchObject({ event: "done", data: { status: "succeeded" } });
    expect(await exitCode(p)).toBe(0);
  }, 120_000);

  it("answers them with the run as it stands at REFVID_DRAIN_MS, sends streams going_away, exits 0, and loses no run", async () => {
    const store = `pglite:${join(dir, "deadline")}`;
    let p = await processes.start("all", {
      REFVID_STORE: store,
      REFVID_DRAIN_MS: "500",
      REFVID_WORKER_CONCURRENCY: "4",
      REFVID_WORKER_LEASE_MS: "1000",
    });
    const key = await tenant(p, processes.adminToken);
    const held = await Promise.all(
      Array.from({ length: 20 }, (_, i) => holdSync(p.url, key, `long ${i} [simulate:delay=8000]`)),
    );
    const followed = holdStream(p, key, held[19]?.runId as string);
    await followed.first;
    const inHand = (runs: any[]) => runs.filter((r) => r.status === "processing").length === 4;
    await untilRuns(p, key, held, inHand, "four runs in hand");

    p.child.kill("SIGTERM");
    await expectAnswered(held, ["queued", "processing"]);
    const { events } = await followed.ended;
    expect(lastEvent(events)).toMatchObject({ event: "going_away" });
    expect(await exitCode(p)).toBe(0);

    // The runs in hand went back to their leases, the rest stayed queued: a restart ends them all.
    // Its own leases are long enough for a loaded machine to renew in time: a run whose renewals
    // came late three times would end interrupted, which is not what this test is about.
    p = await processes.start("all", {
      REFVID_STORE: store,
      REFVID_WORKER_CONCURRENCY: "20",
      REFVID_WORKER_LEASE_MS: "10000",
    });
    const ended = await untilRuns(
      p,
      key,
      held,
      (runs) => runs.every((r) => r.completed_at !== null),
      "every run to end after the restart",
      60_000,
    );
    for (const run of ended) expect(run, JSON.stringify(run)).toMatchObject({ status: "succeeded" });
    await processes.kill(p, "SIGTERM");
  }, 150_000);

  it("refuses new connections, answers /readyz 503, /healthz 200 and anything else 503 on a live connection, until the deadline", async () => {
    // No worker: the run stays queued, so the drain lasts until its deadline.
    const p = await processes.start("api", { REFVID_STORE: "memory", REFVID_DRAIN_MS: "3000" });
    const key = await tenant(p, processes.adminToken);
    const submit = await holdSync(p.url, key, "never started");
    const followed = holdStream(p, key, submit.runId);
    await followed.first;
    const readyz = await unfinishedRequest(p.port, "/readyz");
    const healthz = await unfinishedRequest(p.port, "/healthz");
    const account = await unfinishedRequest(p.port, "/v1/account", { authorization: `Key ${key}` });

    p.child.kill("SIGTERM");
    await eventually(
      async () => ((await refusesConnections(p.port)) ? true : undefined),
      20_000,
      "new connections to be refused",
    );
    expect(await readyz.finish()).toMatchObject({
      status: 503,
      headers: { connection: "close" },
      body: { status: "unavailable" },
    });
    expect(await healthz.finish()).toMatchObject({ status: 200, headers: { connection: "close" } });
    expect(await account.finish()).toMatchObject({
      status: 503,
      headers: { connection: "close", "retry-after": "1" },
      body: { error: { type: "service_unavailable", code: 503 } },
    });

    expect(await submit.body).toMatchObject({ ok: true, json: { run_id: submit.runId, status: "queued" } });
    const { events } = await followed.ended;
    expect(lastEvent(events)).toMatchObject({ event: "going_away" });
    expect(await exitCode(p)).toBe(0);
  }, 90_000);
});
