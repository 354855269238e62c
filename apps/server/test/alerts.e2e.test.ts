/**
 * Spend alerts end to end, on memory and, in the Postgres pass, on Postgres: a real receiver gets
 * `account.balance_low`, `key.budget_threshold` and `key.budget_exhausted` once per crossing,
 * each verifying with the `standardwebhooks` library against the secret of its environment, and
 * each in the organization's delivery log.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyOf } from "./admin-helpers.js";
import {
  eventually,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
  type Tenant,
  useTestRefvid,
} from "./harness.js";
import { FAST, SUBMIT, submitBody } from "./limit-helpers.js";

const t = useTestRefvid();
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/** The alerts that reached the receiver for one organization, verified, in order. */
function alertsFor(organizationId: string, secret: string, requests: ReceivedRequest[]) {
  const webhook = new Webhook(secret);
  return requests
    .map((r) => ({ r, body: JSON.parse(r.body) }))
    .filter(({ body }) => body.data?.organization_id === organizationId)
    .map(({ r, body }) => {
      const headers = {
        "webhook-id": String(r.headers["webhook-id"]),
        "webhook-timestamp": String(r.headers["webhook-timestamp"]),
        "webhook-signature": String(r.headers["webhook-signature"]),
      };
      expect(webhook.verify(r.body, headers)).toEqual(body);
      return body;
    });
}

/** Waits until the receiver holds `count` alerts of the organization. */
async function received(organizationId: string, secret: string, count: number) {
  for (;;) {
    const alerts = alertsFor(organizationId, secret, receiver.requests);
    if (alerts.length >= count) return alerts;
    await receiver.waitFor(receiver.requests.length + 1, 60_000);
  }
}

const secretOf = async (tenant: Tenant) =>
  (await tenant.call("GET", "/v1/webhooks/secret")).body.secret as string;

describe("spend alerts", () => {
  it("tells the organization once when its wallet falls below 20 % of the last top-up, and logs it", async () => {
    const tenant = await t.tenant({ balanceUsd: "1.50", rateLimitPerMinute: FAST });
    const set = await tenant.call("PATCH", "/v1/webhooks/alerts", { webhook_url: `${receiver.url}/alerts` });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      webhook_url: `${receiver.url}/alerts`,
      balance_thresholds: [{ percent_of_last_top_up: 20 }, { percent_of_last_top_up: 5 }],
    });
    // Thresholds 0.30 and 0.075. Four runs of 0.284 leave 0.364; the fifth leaves 0.08: below 0.30 only.
    const runs = [];
    for (let i = 0; i < 5; i++) {
      const run = await tenant.call("POST", SUBMIT, submitBody(`alert ${i} [simulate:delay=60000]`));
      expect(run.status).toBe(201);
      runs.push(run.body.run_id as string);
    }
    const secret = await secretOf(tenant);
    const [alert] = await received(tenant.organizationId, secret, 1);
    expect(alert).toMatchObject({
      type: "account.balance_low",
      data: {
        environment: "live",
        available_usd: "0.08",
        threshold_usd: "0.30",
        threshold: { percent_of_last_top_up: 20 },
      },
    });
    // Cancelling a run gives its hold back; taking it again does not warn twice.
    await tenant.call("POST", `/v1/runs/${runs[0]}/cancel`);
    expect((await tenant.call("POST", SUBMIT, submitBody("again [simulate:delay=60000]"))).status).toBe(201);
    // The receiver's answer is recorded just after it is sent.
    const logged = await eventually(
      async () => {
        const log = await tenant.call("GET", "/v1/webhooks/deliveries");
        const alerts = log.body.data.filter((d: { run_id: string | null }) => d.run_id === null);
        return alerts.every((d: { state: string }) => d.state === "delivered") ? alerts : undefined;
      },
      60_000,
      "the alert's delivery to be logged as delivered",
    );
    expect(logged).toEqual([
      expect.objectContaining({
        event_type: "account.balance_low",
        url: `${receiver.url}/alerts`,
        state: "delivered",
      }),
    ]);
    expect(alertsFor(tenant.organizationId, secret, receiver.requests)).toHaveLength(1);
    for (const id of runs) await tenant.call("POST", `/v1/runs/${id}/cancel`);
  });

  it("tells a key's budget at 80 % and when it refuses a run, signed with the key's environment's secret", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00", rateLimitPerMinute: FAST });
    const test = await keyOf(t, tenant, "test");
    await t.admin("PATCH", `/admin/v1/api-keys/${test.apiKeyId}`, {
      budget: { amount_usd: "0.60", period: "day" },
    });
    const org = await t.admin("PATCH", `/admin/v1/organizations/${tenant.organizationId}`, {
      alerts: { webhook_url: `${receiver.url}/ops`, balance_thresholds: [{ amount_usd: "1.00" }] },
    });
    expect(org.status).toBe(200);
    expect(org.body.alerts).toEqual({
      webhook_url: `${receiver.url}/ops`,
      balance_thresholds: [{ amount_usd: "1.00" }],
    });
    // A test key reads the settings but may not change them.
    expect((await test.call("GET", "/v1/webhooks/alerts")).body.webhook_url).toBe(`${receiver.url}/ops`);
    const denied = await test.call("PATCH", "/v1/webhooks/alerts", { webhook_url: null });
    expect(denied.status).toBe(403);
    expect(denied.body.error.type).toBe("live_key_required");

    const held = [];
    for (const prompt of ["b1", "b2"]) {
      // The second holds 0.568 of 0.60: past 80 %.
      const run = await test.call("POST", SUBMIT, submitBody(`${prompt} [simulate:delay=60000]`));
      expect(run.status).toBe(201);
      held.push(run.body.run_id as string);
    }
    expect((await test.call("POST", SUBMIT, submitBody("b3"))).status).toBe(400);
    expect((await test.call("POST", SUBMIT, submitBody("b4"))).status).toBe(400);
    const testSecret = await secretOf(test);
    // Alerts are sent side by side, not one after another: they are ordered by their timestamps.
    const alerts = (await received(tenant.organizationId, testSecret, 2)).sort((a, b) =>
      a.timestamp === b.timestamp ? a.data.percent - b.data.percent : a.timestamp < b.timestamp ? -1 : 1,
    );
    expect(alerts.map((a) => [a.type, a.data.percent, a.data.api_key_id, a.data.environment])).toEqual([
      ["key.budget_threshold", 80, test.apiKeyId, "test"],
      ["key.budget_exhausted", 100, test.apiKeyId, "test"],
    ]);
    expect(alerts[1].data.budget).toMatchObject({
      amount_usd: "0.60",
      reserved_usd: "0.568",
      remaining_usd: "0.032",
    });
    // The live secret does not verify a test alert.
    const live = new Webhook(await secretOf(tenant));
    const request = receiver.requests.find((r) => r.body.includes(test.apiKeyId)) as ReceivedRequest;
    expect(() =>
      live.verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }),
    ).toThrow();
    const bad = await t.admin("PATCH", `/admin/v1/organizations/${tenant.organizationId}`, {
      alerts: { webhook_url: "ftp://example.com/x" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toMatch(/^body\.alerts\.webhook_url/);
    for (const id of held) await test.call("POST", `/v1/runs/${id}/cancel`);
  });
});
