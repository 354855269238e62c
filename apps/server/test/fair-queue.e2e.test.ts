/**
 * Fair queues end to end (docs/decisions.md, "Fair queues"), on the memory store and, in the
 * Postgres pass, on Postgres: behind a provider that runs two at once, a heavy organization's
 * backlog does not hold back ten light ones, nobody starves, weights and key priority order the
 * starts, and a queued run says where it stands and when it should start.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { expectFairStarts, type Start } from "./fair-starts.js";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { FAST, input, SUBMIT } from "./limit-helpers.js";
import { stream } from "./sse.js";

const CATALOG = {
  providers: { capped: { type: "simulated", max_concurrency: 2 } },
  routes: { "lab-d/model-d/reference-to-video": [{ provider: "capped" }] },
};
const QUICK = "quick [simulate:delay=150]";
const HELD = "held [simulate:delay=600000]";
/** Long enough that a poll sees a position count down while the runs ahead start. */
const STEADY = "steady [simulate:delay=2500]";

let dir: string;
let t: TestRefvid;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-fair-"));
  const file = join(dir, "catalog.yaml");
  await writeFile(file, toYaml(CATALOG));
  t = await startTestRefvid({ REFVID_CATALOG_FILE: file });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
  expect(t.mismatches).toEqual([]);
}, 60_000);

/** 7,000 USD: the scale tier, 100 runs in flight (the interface's highest organization cap). */
const tenant = () => t.tenant({ balanceUsd: "7000.00", maxConcurrency: 100, rateLimitPerMinute: FAST });

async function submit(who: Pick<Tenant, "call">, prompt: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await who.call("POST", SUBMIT, { input: input(prompt) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.run_id);
  }
  return ids;
}

const getRun = async (who: Tenant, id: string) => (await who.call("GET", `/v1/runs/${id}`)).body;

/**
 * Reads until `read` gives `expected`: while both slots are held, a worker still claims a waiting
 * run each poll, finds the provider full and hands it back, and a read in that instant counts the
 * claim.
 */
async function expectSteady<T>(read: () => Promise<T>, expected: T) {
  let last: T | undefined;
  await eventually(async () => {
    last = await read();
    return JSON.stringify(last) === JSON.stringify(expected) ? true : undefined;
  }, 10_000).catch(() => {});
  expect(last).toEqual(expected);
}

/** `fn` over `items`, ten at a time: the server caps connections per address. */
async function inChunks<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 10) out.push(...(await Promise.all(items.slice(i, i + 10).map(fn))));
  return out;
}

/** The runs in the order they started (started_at, then run id for the same millisecond). */
async function startOrder(runs: { who: Tenant; id: string }[]) {
  const read = await inChunks(runs, async ({ who, id }) => ({ who, run: await getRun(who, id) }));
  return read
    .filter(({ run }) => run.started_at !== null)
    .sort(
      (a, b) => a.run.started_at.localeCompare(b.run.started_at) || a.run.run_id.localeCompare(b.run.run_id),
    )
    .map(({ who, run }): Start => ({ organizationId: who.organizationId, at: Date.parse(run.started_at) }));
}

async function cancelAll(runs: { who: Tenant; id: string }[]) {
  await inChunks(runs, ({ who, id }) => who.call("POST", `/v1/runs/${id}/cancel`));
}

describe("fair queue", () => {
  it("starts ten light organizations' runs within their share of a heavy one's backlog, and starves nobody", async () => {
    const heavy = await tenant();
    const heavyRuns = await submit(heavy, QUICK, 100);
    const lights = await Promise.all(Array.from({ length: 10 }, () => tenant()));
    // Heavy's runs go on starting meanwhile; from the moment every light organization has a run
    // queued, heavy may start at most three more before each light one's first has started.
    const firsts = await Promise.all(lights.map((light) => submit(light, QUICK, 1)));
    const allQueuedAt = new Date().toISOString();
    const rest = await Promise.all(lights.map((light) => submit(light, QUICK, 4)));
    const lightRuns = firsts.map((first, i) => [...first, ...(rest[i] as string[])]);
    const all = [
      ...heavyRuns.map((id) => ({ who: heavy, id })),
      ...lights.flatMap((who, i) => (lightRuns[i] as string[]).map((id) => ({ who, id }))),
    ];
    try {
      // Wait until every light run has started: 50 starts, two at a time.
      const order = await eventually(
        async () => {
          const started = await startOrder(all);
          const lightStarts = started.filter((s) => s.organizationId !== heavy.organizationId).length;
          return lightStarts === 50 ? started : undefined;
        },
        120_000,
        "every light run to start",
      );
      expectFairStarts(
        order,
        heavy.organizationId,
        lights.map((l) => l.organizationId),
        Date.parse(allQueuedAt),
      );
    } finally {
      await cancelAll(all);
    }
  }, 180_000);

  it("says where a queued run stands and when it should start, and counts down as runs start", async () => {
    const heavy = await tenant();
    const light = await tenant();
    // History for the estimates: a few quick runs of the model succeed first.
    const warm = await submit(heavy, QUICK, 4);
    await eventually(async () => {
      const runs = await Promise.all(warm.map((id) => getRun(heavy, id)));
      return runs.every((r) => r.status === "succeeded") ? true : undefined;
    }, 60_000);
    // Both slots held, so nothing moves while the positions are read.
    const held = await submit(heavy, HELD, 2);
    await eventually(async () => {
      const runs = await Promise.all(held.map((id) => getRun(heavy, id)));
      return runs.every((r) => r.status === "processing") ? true : undefined;
    }, 30_000);
    const heavyQueued = await submit(heavy, STEADY, 4);
    const lightQueued = await submit(light, STEADY, 3);
    try {
      const positions = async () => ({
        heavy: (await Promise.all(heavyQueued.map((id) => getRun(heavy, id)))).map((r) => r.queue_position),
        light: (await Promise.all(lightQueued.map((id) => getRun(light, id)))).map((r) => r.queue_position),
      });
      // light has none processing: its first two go before heavy's next (heavy holds both slots);
      // on the tie at two, heavy goes first (light was served since), then they alternate.
      await expectSteady(positions, { heavy: [2, 4, 5, 6], light: [0, 1, 3] });
      const queued = await getRun(light, lightQueued[2] as string);
      expect(queued.status).toBe("queued");
      const start = queued.estimated_start_at;
      expect(Date.parse(start.p50)).toBeGreaterThan(Date.now() - 60_000);
      expect(Date.parse(start.p90)).toBeGreaterThanOrEqual(Date.parse(start.p50));
      expect(Date.parse(queued.estimated_end_at.p50)).toBeGreaterThan(Date.parse(start.p50));
      // A processing run has neither.
      const holding = await getRun(heavy, held[0] as string);
      expect(holding).not.toHaveProperty("estimated_start_at");
      expect(holding).not.toHaveProperty("queue_position");

      // Free the slots: the last light run waits its turn, then starts. Its event stream shows its
      // place as it moves, at most once a second, and then the run started.
      const events = stream(t.url, light.apiKey, lightQueued[2] as string, {
        until: (got) => got.some((e) => e.data.status !== "queued"),
      });
      await cancelAll(held.map((id) => ({ who: heavy, id })));
      const seen: number[] = [];
      await eventually(
        async () => {
          const run = await getRun(light, lightQueued[2] as string);
          if (run.status === "queued") seen.push(run.queue_position);
          return run.status === "queued" ? undefined : run;
        },
        60_000,
        "the last light run to start",
      );
      expect(seen.length).toBeGreaterThan(0);
      // It was shown a place until it started. (Runs ending move the processing counts positions
      // are computed from, so a place may also move up; the exact count-down by one at each start
      // is the store contract's "says where a queued run stands" test.)
      const streamed = (await events).events;
      const waiting = streamed.filter((e) => e.data.status === "queued");
      // Its place as it stood at the stream's first read: 3 before the cancels, but on a loaded
      // machine a cancel may come first and move it either way (the exact place is checked above).
      expect(waiting[0]?.data).toMatchObject({ estimated_start_at: expect.any(Object) });
      expect(waiting[0]?.data.queue_position).toBeGreaterThanOrEqual(0);
      expect(waiting.length).toBeGreaterThan(1);
      expect(waiting.at(-1)?.id).toBe(`queued::${waiting.at(-1)?.data.queue_position}`);
      for (let i = 1; i < waiting.length; i++) {
        expect(waiting[i]?.data.queue_position).not.toBe(waiting[i - 1]?.data.queue_position);
        // At most one a second (measured on arrival here: a little slack for the network).
        expect((waiting[i]?.at as number) - (waiting[i - 1]?.at as number)).toBeGreaterThan(900);
      }
      expect(streamed.at(-1)?.data.status).not.toBe("queued");
      expect(seen.every((p) => Number.isInteger(p) && p >= 0)).toBe(true);
    } finally {
      await cancelAll([
        ...held.map((id) => ({ who: heavy, id })),
        ...heavyQueued.map((id) => ({ who: heavy, id })),
        ...lightQueued.map((id) => ({ who: light, id })),
      ]);
    }
  }, 180_000);

  it("starts a high-priority key's runs first within its organization, and honours an organization's weight", async () => {
    const a = await tenant();
    const b = await tenant();
    const weighted = await t.admin("PATCH", `/admin/v1/organizations/${a.organizationId}`, {
      queue_weight: 3,
    });
    expect(weighted).toMatchObject({ status: 200, body: { queue_weight: 3 } });
    const urgentKey = await t.admin("POST", `/admin/v1/organizations/${a.organizationId}/api-keys`, {
      priority: "high",
      rate_limit_per_minute: FAST,
      max_concurrency: 100,
    });
    expect(urgentKey).toMatchObject({ status: 201, body: { priority: "high" } });
    const urgent: Tenant = { ...a, call: (m, p, body, h) => callAs(urgentKey.body.key, m, p, body, h) };
    const held = await submit(b, HELD, 2);
    await eventually(async () => {
      const runs = await Promise.all(held.map((id) => getRun(b, id)));
      return runs.every((r) => r.status === "processing") ? true : undefined;
    }, 30_000);
    const normalRuns = await submit(a, QUICK, 4);
    const urgentRuns = await submit(urgent, QUICK, 2);
    const bRuns = await submit(b, QUICK, 4);
    try {
      // a's high-priority runs lead a's queue. a (weight 3, none processing) reaches a share of 2
      // only after six starts, b (holding both slots) is at 2 already: a's six go first.
      const of = async (who: Tenant, ids: string[]) =>
        (await Promise.all(ids.map((id) => getRun(who, id)))).map((r) => r.queue_position);
      const read = async () => ({
        urgent: await of(urgent, urgentRuns),
        normal: await of(a, normalRuns),
        b: await of(b, bRuns),
      });
      await expectSteady(read, { urgent: [0, 1], normal: [2, 3, 4, 5], b: [6, 7, 8, 9] });
    } finally {
      await cancelAll([
        ...held.map((id) => ({ who: b, id })),
        ...bRuns.map((id) => ({ who: b, id })),
        ...normalRuns.map((id) => ({ who: a, id })),
        ...urgentRuns.map((id) => ({ who: urgent, id })),
      ]);
    }
  }, 120_000);
});

function callAs(
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Key ${apiKey}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json() }));
}
