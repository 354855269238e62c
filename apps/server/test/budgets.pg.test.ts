/**
 * Per-key budgets under racing submits (issue 28): two API processes and a worker process on one
 * Postgres database. Round after round, a live key and a test key with budgets each get a burst of
 * submits split over both API processes at once, their runs held in flight: each admits exactly
 * as many runs as fit its budget (over-admissions: 0) and refuses the rest with
 * `400 budget_exceeded`. After each race, and again once its runs were cancelled, the live key's
 * budget standing (admin API, account, SQL) and the wallet (account, SQL) equal the ledger's sums,
 * and the test key's standing (it has no ledger entries) equals what its runs hold and were charged.
 */
import { formatUsd, parseUsd } from "@refvid/core";
import { describe, expect, it } from "vitest";
import {
  adminLedger,
  callWithKey,
  type FleetKey,
  keyInSql,
  type LedgerRow,
  ledgerInSql,
  ledgerTotals,
  MODEL_D_SUBMIT,
  modelDInput,
  newKey,
  useFleetOnPostgres,
} from "./pg-fleet.js";
import { endedRun, type RefvidProcess, walletInSql } from "./processes.js";

/** What a 4 s run of lab-d/model-d is priced at, and charged when it succeeds. */
const PRICE = 284_000;
/** Held in flight far longer than a round takes; cancelled at its end. */
const HELD = "[simulate:delay=600000]";
const ROUNDS = 5;
/** Submits per key per race, half to each API process, all at once. */
const RACERS = 24;

const f = useFleetOnPostgres(
  {
    REFVID_SIMULATED_LATENCY_MS: "100",
    // Room for every held run of a round: the quick runs of the next never wait for a slot.
    REFVID_WORKER_CONCURRENCY: "16",
  },
  { api: 2, workers: 1 },
);

const budgetedKey = (organizationId: string, environment: FleetKey["environment"], amount: number) =>
  newKey(f.processes, organizationId, {
    environment,
    max_concurrency: 50,
    budget: { amount_usd: formatUsd(amount), period: "day" },
  });

const usd = (amount: string) => parseUsd(amount) as number;

/** What the key's ledger entries say it holds and has spent since `since`. */
function keyLedger(entries: readonly LedgerRow[], apiKeyId: string, since: Date) {
  const mine = entries.filter((e) => e.apiKeyId === apiKeyId);
  const sum = (rows: readonly LedgerRow[]) => rows.reduce((total, e) => total + e.amount, 0);
  return {
    reserved: sum(mine.filter((e) => e.kind === "reservation" || e.kind === "release")),
    spent: 0 - sum(mine.filter((e) => e.kind === "charge" && e.createdAt >= since)),
  };
}

/**
 * The wallet and both keys' budget standings, as the admin API, each key's account and SQL give
 * them, against the ledger (SQL, and as the admin API lists it). Returns what the keys hold.
 */
async function expectAgreement(organizationId: string, live: FleetKey, test: FleetKey, via: RefvidProcess) {
  const entries = await ledgerInSql(f.db, organizationId);
  const totals = ledgerTotals(entries);
  expect(totals.unlike, "entries whose figures are not the running sums").toEqual([]);
  // The admin API's pages list each entry once (newest first by time, which racing admissions
  // write out of order: compared by id).
  const listed = await adminLedger(f.processes, `organization_id=${organizationId}`);
  expect(listed.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
    entries.map((e) => ({ id: e.id, kind: e.kind, amount: e.amount, apiKeyId: e.apiKeyId })),
  );

  const sql = await walletInSql(f.db, organizationId);
  expect({ balance: sql.balance, reserved: sql.reserved }).toEqual({
    balance: totals.balance,
    reserved: totals.reserved,
  });
  const { data: keys } = await f.processes.admin(
    "GET",
    `/admin/v1/organizations/${organizationId}/api-keys?limit=100`,
  );
  const held: Record<FleetKey["environment"], number> = { live: 0, test: 0 };
  for (const key of [live, test]) {
    const account = (await callWithKey(via, key.key, "GET", "/v1/account")).body;
    expect({ balance: usd(account.wallet.balance_usd), reserved: usd(account.wallet.reserved_usd) }).toEqual({
      balance: totals.balance,
      reserved: totals.reserved,
    });
    const listedKey = keys.find((k: { api_key_id: string }) => k.api_key_id === key.id);
    for (const standing of [listedKey.budget, account.api_key_budget]) {
      const since = new Date(standing.period_start);
      const counters = await keyInSql(f.db, key.id, since);
      const shown = { spent: usd(standing.spent_usd), reserved: usd(standing.reserved_usd) };
      // The key's counters, and what its runs hold and were charged, say the same.
      expect(shown).toEqual({ spent: counters.spent, reserved: counters.reserved });
      expect(shown).toEqual({ spent: counters.runsCharged, reserved: counters.runsReserved });
      expect(usd(standing.remaining_usd)).toBe(Math.max(0, counters.budget - shown.spent - shown.reserved));
      // A live key's ledger entries add up to its standing; a test key moves no money and has none.
      if (key.environment === "live") expect(shown).toEqual(keyLedger(entries, key.id, since));
      else expect(entries.filter((e) => e.apiKeyId === key.id)).toEqual([]);
      held[key.environment] = shown.reserved;
    }
  }
  return held;
}

/** A run that must succeed, submitted and waited for: what the key spends before the race. */
async function spend(via: RefvidProcess, key: FleetKey, prompt: string) {
  const res = await callWithKey(via, key.key, "POST", MODEL_D_SUBMIT, { input: modelDInput(prompt) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(await endedRun(f.db, res.body.run_id, 60_000)).toMatchObject({ status: "succeeded" });
}

describe("per-key budgets on two API processes", () => {
  it("admits exactly what fits a key's budget under racing submits, and the budget and wallet agree with the ledger", async () => {
    const org = await f.processes.admin("POST", "/admin/v1/organizations", { name: "budgets" });
    const organizationId = org.organization_id as string;
    await f.processes.admin("POST", `/admin/v1/organizations/${organizationId}/top-ups`, {
      amount_usd: "1000.00",
    });
    await f.processes.admin("POST", `/admin/v1/organizations/${organizationId}/adjustments`, {
      amount_usd: "-0.50",
      reason: "a correction, so the balance is more than top-ups and charges",
    });

    const outcomes: { round: number; key: string; fits: number; admitted: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // 1.00 USD, or exactly three runs' price: the last run that fits takes the budget to the cent.
      const amount = round % 2 === 0 ? 1_000_000 : 3 * PRICE;
      const spentBefore = round % 3;
      const live = await budgetedKey(organizationId, "live", amount);
      const test = await budgetedKey(organizationId, "test", amount);
      for (const key of [live, test])
        for (let i = 0; i < spentBefore; i++)
          await spend(f.api[i % 2] as RefvidProcess, key, `spent ${round}.${i}`);

      // The race: both keys' bursts, split over both API processes, all in the air at once.
      const answers = await Promise.all(
        [live, test].flatMap((key) =>
          Array.from({ length: RACERS }, async (_, i) => ({
            key,
            ...(await callWithKey(f.api[i % 2] as RefvidProcess, key.key, "POST", MODEL_D_SUBMIT, {
              input: modelDInput(`race ${round}.${i} ${HELD}`),
            })),
          })),
        ),
      );
      const admittedIds: string[] = [];
      for (const key of [live, test]) {
        const mine = answers.filter((a) => a.key === key);
        const refused = mine.filter((a) => a.status !== 201);
        expect(refused.map((a) => [a.status, a.body.error?.type])).toEqual(
          refused.map(() => [400, "budget_exceeded"]),
        );
        const ids = mine.filter((a) => a.status === 201).map((a) => a.body.run_id as string);
        admittedIds.push(...ids);
        const fits = Math.floor((amount - spentBefore * PRICE) / PRICE);
        outcomes.push({ round, key: key.environment, fits, admitted: ids.length });
        // Every run the key has is one answered 201 (or one spent before), and all it was charged
        // and holds stays within its budget.
        const { rows } = await f.db.query(
          `select count(*)::int as runs, coalesce(sum(charged), 0)::bigint as charged,
             coalesce(sum(reserved) filter (where status in ('queued', 'processing')), 0)::bigint as held
           from runs where api_key_id = $1`,
          [key.id],
        );
        expect(rows[0].runs).toBe(spentBefore + ids.length);
        expect(
          Number(rows[0].charged) + Number(rows[0].held),
          "charged and held by the key",
        ).toBeLessThanOrEqual(amount);
      }
      const over = outcomes.filter((o) => o.round === round && o.admitted > o.fits);
      expect(over, "over-admissions").toEqual([]);
      expect(outcomes.filter((o) => o.round === round)).toEqual([
        { round, key: "live", fits: 3 - spentBefore, admitted: 3 - spentBefore },
        { round, key: "test", fits: 3 - spentBefore, admitted: 3 - spentBefore },
      ]);

      const via = f.api[round % 2] as RefvidProcess;
      expect(await expectAgreement(organizationId, live, test, via)).toEqual({
        live: (3 - spentBefore) * PRICE,
        test: (3 - spentBefore) * PRICE,
      });
      // Cancelled, the held runs release what they held and are charged nothing.
      for (const id of admittedIds) {
        const owner = answers.find((a) => a.body.run_id === id)?.key as FleetKey;
        const cancelled = await callWithKey(via, owner.key, "POST", `/v1/runs/${id}/cancel`);
        expect(cancelled.status, JSON.stringify(cancelled.body)).toBeLessThan(300);
      }
      for (const id of admittedIds)
        expect(await endedRun(f.db, id, 60_000)).toMatchObject({ status: "cancelled", charged: "0" });
      expect(await expectAgreement(organizationId, live, test, via)).toEqual({ live: 0, test: 0 });
    }
    expect(outcomes.filter((o) => o.admitted > o.fits)).toEqual([]);
  }, 300_000);
});
