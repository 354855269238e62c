import { describe, expect, it } from "vitest";
import {
  compareQueued,
  compareShares,
  nextOrganization,
  type OrganizationShare,
  PRIORITY_RANK,
  type QueuedPlace,
  queuePosition,
} from "./fair-share.js";

const share = (organizationId: string, over: Partial<OrganizationShare> = {}): OrganizationShare => ({
  organizationId,
  weight: 1,
  processing: 0,
  lastTurn: null,
  ...over,
});

describe("compareShares", () => {
  it.each<[string, OrganizationShare, OrganizationShare]>([
    ["fewer runs processing first", share("b", { processing: 1 }), share("a", { processing: 2 })],
    ["relative to weight", share("b", { processing: 3, weight: 2 }), share("a", { processing: 2 })],
    ["never served before served", share("b", { lastTurn: null }), share("a", { lastTurn: 1 })],
    ["served least recently first", share("b", { lastTurn: 3 }), share("a", { lastTurn: 7 })],
    ["by id when all else ties", share("a"), share("b")],
    [
      "equal shares tie exactly (1/3 = 2/6)",
      share("a", { processing: 1, weight: 3 }),
      share("b", { processing: 2, weight: 6 }),
    ],
  ])("%s", (_name, first, second) => {
    expect(compareShares(first, second)).toBeLessThan(0);
    expect(compareShares(second, first)).toBeGreaterThan(0);
  });
});

describe("compareQueued", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  const run = (id: string, priority: number, s: number): QueuedPlace => ({ id, priority, createdAt: at(s) });
  it("orders high before normal before low, then oldest, then by id", () => {
    const runs = [
      run("e", PRIORITY_RANK.low, 0),
      run("d", PRIORITY_RANK.normal, 5),
      run("c", PRIORITY_RANK.normal, 1),
      run("b", PRIORITY_RANK.high, 9),
      run("a", PRIORITY_RANK.normal, 1),
    ];
    expect(runs.sort(compareQueued).map((r) => r.id)).toEqual(["b", "a", "c", "d", "e"]);
  });
});

/**
 * A queue on a manual clock: `capacity` runs at once, each taking `durationMs`; every free slot
 * goes to the run the fair-share order picks. Returns the order runs started in.
 */
function simulate(
  arrivals: { org: string; at: number; priority?: number }[],
  {
    capacity,
    durationMs,
    weights = {},
  }: { capacity: number; durationMs: number; weights?: Record<string, number> },
): { id: string; org: string; startedAt: number }[] {
  const queued = arrivals.map((a, i) => ({
    id: `r${String(i).padStart(4, "0")}`,
    org: a.org,
    priority: a.priority ?? 0,
    createdAt: new Date(a.at),
  }));
  const shares = new Map<string, OrganizationShare>();
  const shareOf = (org: string) => {
    const s = shares.get(org) ?? share(org, { weight: weights[org] ?? 1 });
    shares.set(org, s);
    return s;
  };
  const running: { org: string; endsAt: number }[] = [];
  const started: { id: string; org: string; startedAt: number }[] = [];
  const startedIds = new Set<string>();
  let now = 0;
  let turn = 0;
  while (started.length < queued.length) {
    // Runs end first at this instant, then free slots fill.
    for (const r of running.filter((r) => r.endsAt <= now)) {
      shareOf(r.org).processing -= 1;
      running.splice(running.indexOf(r), 1);
    }
    while (running.length < capacity) {
      const waiting = queued.filter((q) => q.createdAt.getTime() <= now && !startedIds.has(q.id));
      const org = nextOrganization([...new Set(waiting.map((q) => q.org))].map(shareOf));
      if (!org) break;
      const next = waiting.filter((q) => q.org === org.organizationId).sort(compareQueued)[0];
      if (!next) break;
      org.processing += 1;
      org.lastTurn = ++turn;
      running.push({ org: next.org, endsAt: now + durationMs });
      started.push({ id: next.id, org: next.org, startedAt: now });
      startedIds.add(next.id);
    }
    const upcoming = [
      ...running.map((r) => r.endsAt),
      ...queued.map((q) => q.createdAt.getTime()).filter((t) => t > now),
    ];
    now = Math.min(...upcoming);
  }
  return started;
}

describe("fair share on a manual clock", () => {
  it("a heavy organization's backlog does not hold back ten light ones, and it keeps its share", () => {
    const arrivals = [
      ...Array.from({ length: 200 }, (_, i) => ({ org: "heavy", at: i })),
      ...Array.from({ length: 10 }, (_, o) =>
        Array.from({ length: 5 }, () => ({ org: `light${o}`, at: 500 })),
      ).flat(),
    ];
    const started = simulate(arrivals, { capacity: 2, durationMs: 1000 });
    const heavy = started.filter((s) => s.org === "heavy");
    const heavyFourth = started.indexOf(heavy[3] as (typeof heavy)[number]);
    for (let o = 0; o < 10; o++) {
      expect(started.findIndex((s) => s.org === `light${o}`)).toBeLessThan(heavyFourth);
    }
    // Nobody starves: among the first 60 starts, heavy has one in every 11 at least.
    expect(started.slice(0, 60).filter((s) => s.org === "heavy").length).toBeGreaterThanOrEqual(5);
  });

  it.each<[string, Record<string, number>, number]>([
    ["equal weights share equally", { a: 1, b: 1 }, 0.5],
    ["weight 3 gets three quarters", { a: 3, b: 1 }, 0.75],
  ])("%s", (_name, weights, shareOfA) => {
    const arrivals = ["a", "b"].flatMap((org) => Array.from({ length: 400 }, () => ({ org, at: 0 })));
    const started = simulate(arrivals, { capacity: 4, durationMs: 1000, weights });
    const first = started.slice(0, 200);
    expect(first.filter((s) => s.org === "a").length / first.length).toBeCloseTo(shareOfA, 1);
  });

  it("priority orders an organization's own runs and never takes another's share", () => {
    const arrivals = [
      ...Array.from({ length: 6 }, () => ({ org: "a", at: 0 })),
      ...Array.from({ length: 6 }, () => ({ org: "a", at: 1, priority: PRIORITY_RANK.high })),
      ...Array.from({ length: 6 }, () => ({ org: "b", at: 1 })),
    ];
    const started = simulate(arrivals, { capacity: 1, durationMs: 10 });
    // a's first run started at 0, before the others arrived; then a's high-priority runs lead a's
    // queue, and the two organizations alternate.
    expect(started.map((s) => s.org).join("")).toBe(`a${"ba".repeat(6)}aaaaa`.slice(0, 18));
    const aAfterFirst = started.filter((s) => s.org === "a").slice(1, 7);
    expect(aAfterFirst.map((s) => Number(s.id.slice(1)))).toEqual([6, 7, 8, 9, 10, 11]);
  });
});

describe("queuePosition", () => {
  it.each<[string, OrganizationShare, number, Parameters<typeof queuePosition>[2], number]>([
    ["alone at the head", share("a"), 0, [], 0],
    ["behind its own runs", share("a"), 3, [], 3],
    [
      "a light organization passes a heavy one's backlog",
      share("light"),
      0,
      [{ ...share("heavy", { processing: 2, lastTurn: 5 }), queued: 198 }],
      0,
    ],
    [
      "a heavy organization's run waits for each light one's share",
      share("heavy", { processing: 2, lastTurn: 5 }),
      0,
      [
        { ...share("l1"), queued: 5 },
        { ...share("l2"), queued: 1 },
      ],
      // Each light organization gets runs until it too has 2 processing (l2 has only one to run);
      // on the tie at 2, heavy goes first: l1 was served since heavy's last turn.
      2 + 1,
    ],
    [
      "weight counts: weight 2 gets two runs for each of a weight-1 organization's",
      share("a", { lastTurn: 1 }),
      2,
      [{ ...share("b", { weight: 2, lastTurn: 2 }), queued: 10 }],
      2 + 4,
    ],
  ])("%s", (_name, own, aheadInOrg, others, expected) => {
    expect(queuePosition(own, aheadInOrg, others)).toBe(expected);
  });

  it("matches the start order of the simulation when organizations start from different shares", () => {
    // heavy's first two start at 0 and never end; then everyone queues at 1.
    const arrivals = [
      { org: "heavy", at: 0 },
      { org: "heavy", at: 0 },
      ...["heavy", "l1", "l2", "l3"].flatMap((org) => Array.from({ length: 6 }, () => ({ org, at: 1 }))),
    ];
    const weights = { heavy: 1, l1: 1, l2: 2, l3: 1 };
    const started = simulate(arrivals, { capacity: 1000, durationMs: 1_000_000, weights }).slice(2);
    for (const [position, run] of started.entries()) {
      const inOrg = started.filter((s) => s.org === run.org).indexOf(run);
      const shareAt1 = (org: keyof typeof weights) =>
        share(org, {
          weight: weights[org],
          processing: org === "heavy" ? 2 : 0,
          lastTurn: org === "heavy" ? 2 : null,
        });
      const others = (["heavy", "l1", "l2", "l3"] as const)
        .filter((o) => o !== run.org)
        .map((o) => ({ ...shareAt1(o), queued: 6 }));
      expect(queuePosition(shareAt1(run.org as keyof typeof weights), inOrg, others), run.id).toBe(position);
    }
  });

  it("matches the start order of the simulation when no run ends", () => {
    // Capacity large enough that nothing ends while the queue drains: the order is the fair one.
    const arrivals = [
      ...Array.from({ length: 30 }, () => ({ org: "a", at: 0 })),
      ...Array.from({ length: 10 }, () => ({ org: "b", at: 0 })),
      ...Array.from({ length: 20 }, () => ({ org: "c", at: 0 })),
    ];
    const weights = { a: 1, b: 1, c: 2 };
    const started = simulate(arrivals, { capacity: 1000, durationMs: 1_000_000, weights });
    for (const [position, run] of started.entries()) {
      const org = run.org;
      const inOrg = started.filter((s) => s.org === org).indexOf(run);
      const others = ["a", "b", "c"]
        .filter((o) => o !== org)
        .map((o) => ({
          ...share(o, { weight: weights[o as keyof typeof weights] }),
          queued: arrivals.filter((x) => x.org === o).length,
        }));
      expect(queuePosition(share(org, { weight: weights[org as keyof typeof weights] }), inOrg, others)).toBe(
        position,
      );
    }
  });
});
