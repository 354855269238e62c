/**
 * The ledger, operators' corrections, the audit log and per-key budgets over HTTP, on memory and,
 * in the Postgres pass, on Postgres: every change of the wallet is an entry, the account equals the
 * ledger's sums after each step, a top-up with an Idempotency-Key is made once, reversals and
 * adjustments leave a trail naming the admin token, and a key's budget refuses what would pass it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyOf } from "./admin-helpers.js";
import { callerFor, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { FAST, SUBMIT, submitBody, waitTerminal } from "./limit-helpers.js";

const alice = randomBytes(16).toString("hex");
const bob = randomBytes(16).toString("hex");
let t: TestRefvid;
beforeAll(async () => {
  t = await startTestRefvid({ REFVID_ADMIN_TOKENS: `alice:${alice},bob:${bob}` });
});
afterAll(async () => {
  expect(t.mismatches).toEqual([]);
  await t.close();
});

const micros = (usd: string) => {
  expect(usd).toMatch(/^-?\d+\.\d{2,6}$/);
  const negative = usd.startsWith("-");
  const [whole = "0", fraction = ""] = usd.replace("-", "").split(".");
  const value = Number(whole) * 1_000_000 + Number(fraction.padEnd(6, "0"));
  return negative ? -value : value;
};

/** An admin request made with one of the named tokens, with extra headers. */
async function as(token: string, method: string, path: string, body?: unknown, headers = {}) {
  return callerFor(t.url, token)(method, path, body, { authorization: `Bearer ${token}`, ...headers });
}

/** Every entry of the caller's ledger, newest first, page by page. */
async function ledgerOf(call: Tenant["call"], query = "") {
  const entries: Record<string, string | null>[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(
      "GET",
      `/v1/ledger?limit=3${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(page.status).toBe(200);
    entries.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return entries;
}

/** The account's wallet equals the ledger's sums, and each entry's figures are its running sums. */
async function expectReconciled(call: Tenant["call"]) {
  const entries = await ledgerOf(call);
  const wallet = (await call("GET", "/v1/account")).body.wallet;
  let balance = 0;
  let reserved = 0;
  for (const entry of [...entries].reverse()) {
    const amount = micros(entry.amount_usd as string);
    if (entry.kind === "reservation" || entry.kind === "release") reserved += amount;
    else balance += amount;
    expect([micros(entry.balance_usd as string), micros(entry.reserved_usd as string)]).toEqual([
      balance,
      reserved,
    ]);
  }
  expect({ balance, reserved }).toEqual({
    balance: micros(wallet.balance_usd),
    reserved: micros(wallet.reserved_usd),
  });
  return entries;
}

describe("the ledger", () => {
  it("records each run's reservation, charge and release, adding up to the account", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00", rateLimitPerMinute: FAST });
    const test = await keyOf(t, tenant, "test");
    const ok = await tenant.call("POST", SUBMIT, submitBody("ledger ok"));
    const bad = await tenant.call("POST", SUBMIT, submitBody("ledger [simulate:fail]"));
    const sandbox = await test.call("POST", SUBMIT, submitBody("ledger test run"));
    for (const res of [ok, bad, sandbox]) expect(res.status).toBe(201);
    await waitTerminal(tenant.call, [ok.body.run_id, bad.body.run_id], 60_000);
    await waitTerminal(test.call, [sandbox.body.run_id], 60_000);

    const entries = await expectReconciled(tenant.call);
    const byRun = (id: string) => entries.filter((e) => e.run_id === id).map((e) => [e.kind, e.amount_usd]);
    expect(byRun(ok.body.run_id).reverse()).toEqual([
      ["reservation", "0.284"],
      ["charge", "-0.284"],
      ["release", "-0.284"],
    ]);
    expect(byRun(bad.body.run_id).reverse()).toEqual([
      ["reservation", "0.284"],
      ["release", "-0.284"],
    ]);
    // A test run moves no money: a test key reads the same ledger, without its run.
    expect(byRun(sandbox.body.run_id)).toEqual([]);
    expect((await ledgerOf(test.call)).map((e) => e.ledger_entry_id)).toEqual(
      entries.map((e) => e.ledger_entry_id),
    );

    const charges = await ledgerOf(tenant.call, "&kind=charge,top_up");
    expect(charges.map((e) => e.kind)).toEqual(["charge", "top_up"]);
    expect(await ledgerOf(tenant.call, `&run_id=${bad.body.run_id}`)).toHaveLength(2);
    expect(await ledgerOf(tenant.call, `&api_key_id=${tenant.apiKeyId}`)).toHaveLength(5);
    const future = await ledgerOf(tenant.call, "&from=2099-01-01T00:00:00Z");
    expect(future).toEqual([]);

    const wrongKind = await tenant.call("GET", "/v1/ledger?kind=refund");
    expect(wrongKind.status).toBe(400);
    expect(JSON.stringify(wrongKind.body.error)).toContain("kind");
    const page = await tenant.call("GET", "/v1/ledger?limit=1");
    const otherFilter = await tenant.call(
      "GET",
      `/v1/ledger?limit=1&kind=charge&cursor=${encodeURIComponent(page.body.next_cursor)}`,
    );
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.body.error.fields[0].field).toBe("query.cursor");

    // Another organization's ledger shows none of these.
    const other = await t.tenant({ balanceUsd: "1.00" });
    expect((await ledgerOf(other.call)).map((e) => e.kind)).toEqual(["top_up"]);
    const admin = await as(
      alice,
      "GET",
      `/admin/v1/ledger?organization_id=${tenant.organizationId}&limit=100`,
    );
    expect(admin.body.data.map((e: { ledger_entry_id: string }) => e.ledger_entry_id)).toEqual(
      entries.map((e) => e.ledger_entry_id),
    );
    expect((await as(alice, "GET", "/admin/v1/ledger?organization_id=org_nope")).status).toBe(404);
  });
});

describe("operators' corrections", () => {
  it("makes a top-up once per Idempotency-Key, reverses and adjusts with a reason, and logs who did", async () => {
    const tenant = await t.tenant({ balanceUsd: "0", rateLimitPerMinute: FAST });
    const org = tenant.organizationId;
    const topUp = (amount: string, token = alice) =>
      as(
        token,
        "POST",
        `/admin/v1/organizations/${org}/top-ups`,
        { amount_usd: amount, note: "inv 17" },
        {
          "idempotency-key": "inv-17",
        },
      );
    const first = await topUp("400.00");
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ actor: "alice", reversed_at: null, organization: { tier: "growth" } });
    const again = await topUp("400.00", bob);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.top_up_id).toBe(first.body.top_up_id);
    expect(again.body.organization.wallet.balance_usd).toBe("400.00");
    const other = await topUp("40.00");
    expect(other.status).toBe(422);
    expect(other.body.error.type).toBe("idempotency_key_reused");

    const run = await tenant.call("POST", SUBMIT, submitBody("held [simulate:delay=60000]"));
    expect(run.status).toBe(201);
    // 400.00 held 0.284: taking more than 399.716 away is refused.
    const tooMuch = await as(bob, "POST", `/admin/v1/organizations/${org}/adjustments`, {
      amount_usd: "-399.72",
      reason: "test",
    });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.error).toMatchObject({ type: "insufficient_available_balance" });
    const credit = await as(bob, "POST", `/admin/v1/organizations/${org}/adjustments`, {
      amount_usd: "1.50",
      reason: "credit for the outage",
    });
    expect(credit.status).toBe(201);
    expect(credit.body.ledger_entry).toMatchObject({
      kind: "adjustment",
      amount_usd: "1.50",
      balance_usd: "401.50",
      reserved_usd: "0.284",
      reason: "credit for the outage",
      actor: "bob",
    });
    const noReason = await as(bob, "POST", `/admin/v1/organizations/${org}/adjustments`, {
      amount_usd: "1.00",
    });
    expect(noReason.status).toBe(400);
    expect(JSON.stringify(noReason.body.error.fields)).toContain("reason");
    const zero = await as(bob, "POST", `/admin/v1/organizations/${org}/adjustments`, {
      amount_usd: "0",
      reason: "x",
    });
    expect(zero.status).toBe(400);
    expect(zero.body.error.fields[0].field).toBe("body.amount_usd");

    const reversal = `/admin/v1/organizations/${org}/top-ups/${first.body.top_up_id}/reversal`;
    // 401.50 less the 0.284 held leaves 401.216 available: enough to give the 400.00 back.
    const reversed = await as(bob, "POST", reversal, { reason: "paid by card, refunded" });
    expect(reversed.status).toBe(201);
    expect(reversed.body).toMatchObject({
      ledger_entry: {
        kind: "reversal",
        amount_usd: "-400.00",
        top_up_id: first.body.top_up_id,
        actor: "bob",
      },
      organization: { tier: "starter", wallet: { balance_usd: "1.50", available_usd: "1.216" } },
    });
    const twice = await as(bob, "POST", reversal, { reason: "again" });
    expect(twice.status).toBe(409);
    expect(twice.body.error.type).toBe("top_up_already_reversed");
    expect(
      (await as(bob, "POST", `/admin/v1/organizations/${org}/top-ups/top_nope/reversal`, { reason: "x" }))
        .status,
    ).toBe(404);
    const listed = await as(alice, "GET", `/admin/v1/organizations/${org}/top-ups`);
    expect(listed.body.data[0]).toMatchObject({ top_up_id: first.body.top_up_id, actor: "alice" });
    expect(listed.body.data[0].reversed_at).not.toBeNull();
    await expectReconciled(tenant.call);

    const audit = await as(alice, "GET", `/admin/v1/audit?organization_id=${org}`);
    expect(audit.status).toBe(200);
    expect(audit.body.data.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ["top_up.reverse", "bob"],
      ["balance.adjust", "bob"],
      ["top_up.create", "alice"],
      ["api_key.create", "admin"],
      ["organization.create", "admin"],
    ]);
    expect(audit.body.data[0]).toMatchObject({
      target_id: first.body.top_up_id,
      detail: { reason: "paid by card, refunded" },
    });
    expect(audit.body.data[0].request_id).toMatch(/^req_/);
    const byBob = await as(alice, "GET", `/admin/v1/audit?organization_id=${org}&actor=bob&limit=1`);
    expect(byBob.body).toMatchObject({ has_more: true, data: [{ action: "top_up.reverse" }] });
    // Creating a key never puts its secret in the log.
    expect(JSON.stringify(audit.body)).not.toContain(tenant.apiKey);
    await tenant.call("POST", `/v1/runs/${run.body.run_id}/cancel`);
  });
});

describe("per-key budgets", () => {
  it("refuses a run that would take a key past its budget, naming what is spent and when it resets", async () => {
    const tenant = await t.tenant({ balanceUsd: "100.00", rateLimitPerMinute: FAST });
    const created = await t.admin("POST", `/admin/v1/organizations/${tenant.organizationId}/api-keys`, {
      rate_limit_per_minute: FAST,
      budget: { amount_usd: "0.60", period: "day" },
    });
    expect(created.status).toBe(201);
    expect(created.body.budget).toMatchObject({ amount_usd: "0.60", period: "day", spent_usd: "0.00" });
    const call = callerFor(t.url, created.body.key);
    const first = await call("POST", SUBMIT, submitBody("budget 1"));
    expect(first.status).toBe(201);
    await waitTerminal(call, [first.body.run_id], 60_000);
    const held = await call("POST", SUBMIT, submitBody("budget 2 [simulate:delay=60000]"));
    expect(held.status).toBe(201);
    const refused = await call("POST", SUBMIT, submitBody("budget 3"));
    expect(refused.status).toBe(400);
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(refused.body.error).toMatchObject({
      type: "budget_exceeded",
      code: 400,
      required_usd: "0.284",
      available_usd: "0.032",
      budget_usd: "0.60",
      spent_usd: "0.284",
      reserved_usd: "0.284",
      period: "day",
      api_key_id: created.body.api_key_id,
    });
    expect(refused.body.error.message).toContain("budget of 0.60 USD a day");
    expect(Date.parse(refused.body.error.resets_at)).toBeGreaterThanOrEqual(tomorrow.getTime() - 1);
    expect(refused.body.error.request_id).toBe(refused.headers.get("x-request-id"));
    const account = await call("GET", "/v1/account");
    expect(account.body.api_key_budget).toMatchObject({
      spent_usd: "0.284",
      reserved_usd: "0.284",
      remaining_usd: "0.032",
    });

    // Cancelling the held run releases its hold; a raised budget admits at once; null removes it.
    await call("POST", `/v1/runs/${held.body.run_id}/cancel`);
    const raised = await t.admin("PATCH", `/admin/v1/api-keys/${created.body.api_key_id}`, {
      budget: { amount_usd: "0.50", period: "month" },
    });
    expect(raised.body.budget).toMatchObject({
      spent_usd: "0.284",
      reserved_usd: "0.00",
      remaining_usd: "0.216",
    });
    expect((await call("POST", SUBMIT, submitBody("budget 4"))).status).toBe(400);
    const removed = await t.admin("PATCH", `/admin/v1/api-keys/${created.body.api_key_id}`, { budget: null });
    expect(removed.body.budget).toBeNull();
    const admitted = await call("POST", SUBMIT, submitBody("budget 5"));
    expect(admitted.status).toBe(201);
    await waitTerminal(call, [admitted.body.run_id], 60_000);
    const wrong = await t.admin("PATCH", `/admin/v1/api-keys/${created.body.api_key_id}`, {
      budget: { amount_usd: "ten", period: "day" },
    });
    expect(wrong.status).toBe(400);
    expect(JSON.stringify(wrong.body.error.fields)).toContain("budget");
  });

  it("holds a test key to its budget on what its runs are priced at", async () => {
    const tenant = await t.tenant({ balanceUsd: "0", environment: "test", rateLimitPerMinute: FAST });
    const patched = await t.admin("PATCH", `/admin/v1/api-keys/${tenant.apiKeyId}`, {
      budget: { amount_usd: "0.30", period: "week" },
    });
    expect(patched.status).toBe(200);
    const first = await tenant.call("POST", SUBMIT, submitBody("test budget 1"));
    expect(first.status).toBe(201);
    await waitTerminal(tenant.call, [first.body.run_id], 60_000);
    const second = await tenant.call("POST", SUBMIT, submitBody("test budget 2"));
    expect(second.status).toBe(400);
    expect(second.body.error).toMatchObject({ type: "budget_exceeded", spent_usd: "0.284", period: "week" });
  });
});
