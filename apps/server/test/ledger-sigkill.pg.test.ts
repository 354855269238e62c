/**
 * The ledger reconciles after processes die mid-flight (issue 28): two API and two worker processes
 * on one Postgres database, worker processes killed with SIGKILL mid-run again and again, and an
 * API process killed amid a burst of submits retried elsewhere with their Idempotency-Keys. Once
 * every run has ended, every organization's wallet equals its ledger's sums, each live run has
 * exactly one reservation and one release (and one charge, equal to its charge, iff it succeeded
 * with one), a test run none, and no entry was lost or written twice.
 */
import { formatUsd } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { eventually } from "./harness.js";
import {
  callWithKey,
  type FleetKey,
  keyInSql,
  ledgerInSql,
  ledgerTotals,
  MODEL_D_SUBMIT,
  modelDInput,
  newKey,
  useFleetOnPostgres,
} from "./pg-fleet.js";
import { type RefvidProcess, walletInSql } from "./processes.js";

const TOP_UP = 300_000_000;

const f = useFleetOnPostgres(
  {
    REFVID_WORKER_LEASE_MS: "1500",
    REFVID_SIMULATED_LATENCY_MS: "200",
  },
  { api: 2, workers: 2 },
);

/** A starter organization (cap 10 per environment) topped up once, with the keys asked for. */
async function tenant(
  keys: { environment: FleetKey["environment"]; budget?: { amount_usd: string; period: string } }[],
) {
  const org = await f.processes.admin("POST", "/admin/v1/organizations", { name: "sigkill" });
  const organizationId = org.organization_id as string;
  await f.processes.admin("POST", `/admin/v1/organizations/${organizationId}/top-ups`, {
    amount_usd: "300.00",
  });
  const made: FleetKey[] = [];
  for (const key of keys)
    made.push(await newKey(f.processes, organizationId, { ...key, max_concurrency: 10 }));
  return { organizationId, keys: made };
}

async function allEnded(organizationId: string) {
  await eventually(
    async () => ((await walletInSql(f.db, organizationId)).inFlightRuns === 0 ? true : undefined),
    120_000,
    "every run to end",
  );
}

/**
 * The organization's wallet (SQL, and its account through `key`) equals its ledger's sums, each
 * entry's figures are the running sums, each run has exactly the entries its end calls for, and
 * the only other entry is the top-up.
 */
async function expectReconciled(organizationId: string, key: FleetKey) {
  const entries = await ledgerInSql(f.db, organizationId);
  const totals = ledgerTotals(entries);
  expect(totals.unlike, "entries whose figures are not the running sums").toEqual([]);
  expect(totals.reserved).toBe(0);
  const wallet = await walletInSql(f.db, organizationId);
  expect({ balance: wallet.balance, reserved: wallet.reserved }).toEqual({
    balance: totals.balance,
    reserved: totals.reserved,
  });
  const account = (await callWithKey(f.api[0] as RefvidProcess, key.key, "GET", "/v1/account")).body;
  expect(account.wallet).toMatchObject({
    balance_usd: formatUsd(totals.balance),
    reserved_usd: "0.00",
  });

  const { rows: runs } = await f.db.query(
    `select id, api_key_id, environment, status, reserved::bigint as reserved, charged::bigint as charged
     from runs where organization_id = $1 order by id`,
    [organizationId],
  );
  const wrong: unknown[] = [];
  let expectedCount = 1; // the top-up
  for (const run of runs) {
    const reserved = Number(run.reserved);
    const charged = Number(run.charged);
    const expected =
      run.environment === "test"
        ? []
        : [
            { kind: "reservation", amount: reserved, apiKeyId: run.api_key_id },
            ...(run.status === "succeeded" && charged > 0
              ? [{ kind: "charge", amount: -charged, apiKeyId: run.api_key_id }]
              : []),
            { kind: "release", amount: -reserved, apiKeyId: run.api_key_id },
          ];
    expectedCount += expected.length;
    const found = entries
      .filter((e) => e.runId === run.id)
      .map((e) => ({ kind: e.kind, amount: e.amount, apiKeyId: e.apiKeyId }));
    if (JSON.stringify(found) !== JSON.stringify(expected)) wrong.push({ run, found, expected });
  }
  expect(wrong, "runs whose ledger entries are not what their end calls for").toEqual([]);
  expect(entries.filter((e) => e.runId === null).map((e) => [e.kind, e.amount])).toEqual([
    ["top_up", TOP_UP],
  ]);
  expect(entries).toHaveLength(expectedCount);
  return runs;
}

describe("the ledger when processes are killed", () => {
  it("keeps every wallet equal to its ledger when workers are killed with SIGKILL mid-run, again and again", async () => {
    const a = await tenant([
      { environment: "live" },
      { environment: "live", budget: { amount_usd: "100.00", period: "month" } },
      { environment: "test" },
    ]);
    const b = await tenant([{ environment: "live" }]);
    // One run held until it is cancelled, whichever worker has it then.
    const submits = [
      { via: f.api[0] as RefvidProcess, key: a.keys[0] as FleetKey, prompt: "held [simulate:delay=600000]" },
    ];
    for (let i = 0; i < 8; i++) {
      // Every fourth is told to fail: a failed run is released and charged nothing.
      const prompt = `a ${i} ${i % 4 === 3 ? "[simulate:fail] " : ""}[simulate:delay=1500]`;
      submits.push({ via: f.api[i % 2] as RefvidProcess, key: a.keys[i % 2] as FleetKey, prompt });
    }
    for (let i = 0; i < 4; i++)
      submits.push({
        via: f.api[i % 2] as RefvidProcess,
        key: a.keys[2] as FleetKey,
        prompt: `test ${i} [simulate:delay=1500]`,
      });
    for (let i = 0; i < 6; i++)
      submits.push({
        via: f.api[i % 2] as RefvidProcess,
        key: b.keys[0] as FleetKey,
        prompt: `b ${i} [simulate:delay=1500]`,
      });
    const ids = new Map<string, FleetKey>();
    for (const { via, key, prompt } of submits) {
      const res = await callWithKey(via, key.key, "POST", MODEL_D_SUBMIT, { input: modelDInput(prompt) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.set(res.body.run_id, key);
    }

    for (let round = 0; round < 3; round++) {
      await eventually(
        async () => {
          const { rows } = await f.db.query(
            "select count(*)::int as n from runs where organization_id = any($1) and status = 'processing'",
            [[a.organizationId, b.organizationId]],
          );
          return rows[0].n > 0 ? true : undefined;
        },
        30_000,
        "a run in processing",
      );
      const victim = f.workers.shift() as RefvidProcess;
      await f.processes.kill(victim, "SIGKILL");
      f.workers.push(await f.processes.start("worker"));
      if (round === 0) {
        // The held run, cancelled while its worker is dead or it is being taken up again.
        const [held, key] = [...ids.entries()][0] as [string, FleetKey];
        const cancelled = await callWithKey(
          f.api[1] as RefvidProcess,
          key.key,
          "POST",
          `/v1/runs/${held}/cancel`,
        );
        expect(cancelled.body).toMatchObject({ run_id: held, status: "cancelled" });
      }
    }
    await allEnded(a.organizationId);
    await allEnded(b.organizationId);

    const runs = [
      ...(await expectReconciled(a.organizationId, a.keys[0] as FleetKey)),
      ...(await expectReconciled(b.organizationId, b.keys[0] as FleetKey)),
    ];
    expect(runs).toHaveLength(submits.length);
    const { rows: attempts } = await f.db.query("select max(attempts)::int as n from runs");
    expect(attempts[0].n).toBeGreaterThan(1); // killed runs really were taken up again
    expect(runs.filter((r) => r.status === "cancelled")).toHaveLength(1);
    expect(runs.some((r) => r.status === "succeeded")).toBe(true);

    // The budgeted key spent what its runs were charged, as its ledger entries say, and holds nothing.
    const budgeted = a.keys[1] as FleetKey;
    const { data: keys } = await f.processes.admin(
      "GET",
      `/admin/v1/organizations/${a.organizationId}/api-keys`,
    );
    const standing = keys.find((k: { api_key_id: string }) => k.api_key_id === budgeted.id).budget;
    const since = new Date(standing.period_start);
    const sql = await keyInSql(f.db, budgeted.id, since);
    const charges = (await ledgerInSql(f.db, a.organizationId)).filter(
      (e) => e.apiKeyId === budgeted.id && e.kind === "charge" && e.createdAt >= since,
    );
    expect({ spent: sql.spent, reserved: sql.reserved }).toEqual({
      spent: sql.runsCharged,
      reserved: 0,
    });
    expect(sql.spent).toBe(0 - charges.reduce((total, e) => total + e.amount, 0));
    expect(standing).toMatchObject({ reserved_usd: "0.00" });
  }, 240_000);

  it("writes one reservation a run when an API process is killed amid submits retried elsewhere with their Idempotency-Keys", async () => {
    const t = await tenant([{ environment: "live" }]);
    const key = t.keys[0] as FleetKey;
    const victim = f.api.shift() as RefvidProcess;
    const survivor = f.api[0] as RefvidProcess;
    const body = (i: number) => ({ input: modelDInput(`burst ${i} [simulate:delay=1000]`) });
    const headers = (i: number) => ({
      authorization: `Key ${key.key}`,
      "content-type": "application/json",
      "idempotency-key": `burst-${i}`,
    });
    const send = (via: RefvidProcess, i: number) =>
      fetch(`${via.url}${MODEL_D_SUBMIT}`, {
        method: "POST",
        headers: headers(i),
        body: JSON.stringify(body(i)),
      }).then(
        async (res) => ({
          status: res.status,
          replayed: res.headers.get("idempotent-replayed") === "true",
          body: (await res.json()) as any,
        }),
        () => undefined, // the process died before it answered
      );
    const BURST = 8;
    let answered = 0;
    const burst = Array.from({ length: BURST }, (_, i) => send(victim, i).finally(() => answered++));
    // Killed once the first submit was admitted, while the others are in the air or being admitted
    // (or, on a machine slow to kill, once all were answered: the retries below replay them).
    await eventually(
      async () => {
        const { rows } = await f.db.query("select count(*)::int as n from runs where organization_id = $1", [
          t.organizationId,
        ]);
        return rows[0].n > 0 || answered === BURST ? true : undefined;
      },
      30_000,
      "a submit admitted",
    );
    await f.processes.kill(victim, "SIGKILL");
    const first = await Promise.all(burst);
    f.api.push(await f.processes.start("api"));

    // Each retry answers with the run its first try made, or makes it: one run for each key.
    const retried = [];
    for (let i = 0; i < BURST; i++) retried.push(await send(survivor, i));
    expect(retried.map((r) => r?.status)).toEqual(Array(BURST).fill(201));
    // The first admitted before the kill: its retry is a replay.
    expect(
      retried.some((r) => r?.replayed),
      JSON.stringify(first),
    ).toBe(true);
    const runIds = retried.map((r) => r?.body.run_id);
    expect(new Set(runIds).size).toBe(BURST);
    await allEnded(t.organizationId);
    const runs = await expectReconciled(t.organizationId, key);
    expect(runs.map((r) => r.id).sort()).toEqual([...runIds].sort());
  }, 120_000);
});
