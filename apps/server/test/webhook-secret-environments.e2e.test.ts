/**
 * Live and test keys are separate worlds for webhook signing too (docs/decisions.md, "Test keys"):
 * an organization has one secret per environment, a key reads and rotates only its own
 * environment's, and a run's webhooks are signed with the secret of the run's environment. Real
 * deliveries to a real receiver, verified as a receiver would.
 */
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from "@refvid/client";
import { afterAll, describe, expect, it } from "vitest";
import { keyOf } from "./admin-helpers.js";
import { BUSY, D, quickD } from "./api-fixtures.js";
import { type ReceivedRequest, type Receiver, startReceiver, type Tenant, useTestRefvid } from "./harness.js";

const t = useTestRefvid();
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

/** An organization's live key and a test key of the same organization, and a receiver for both. */
async function organization() {
  const live = await t.tenant(BUSY);
  const test = await keyOf(t, live, "test");
  const hooks = await startReceiver();
  receivers.push(hooks);
  return { live, test, hooks };
}

/** The secret as `key` reads it: the whole answer. */
async function secretOf(key: Tenant) {
  const res = await key.call("GET", "/v1/webhooks/secret");
  expect(res.status).toBe(200);
  return res.body;
}

/** Runs one model-d run with a webhook to `hooks` through `key`; the request its end sent. */
async function webhookOf(key: Tenant, hooks: Receiver): Promise<ReceivedRequest> {
  const seen = hooks.requests.length;
  const run = await key.client.submit(D, quickD(), { webhookUrl: `${hooks.url}/hook` });
  const requests = await hooks.waitFor(seen + 1);
  const request = requests[seen] as ReceivedRequest;
  expect((JSON.parse(request.body) as WebhookEvent).data.run_id).toBe(run.run_id);
  return request;
}

/** Whether `secret` verifies the request; any failure but a signature that does not match throws. */
const verifies = (request: ReceivedRequest, secret: string) =>
  verifyWebhook(request.body, request.headers, secret).then(
    () => true,
    (err: unknown) => {
      if (err instanceof WebhookVerificationError && err.reason === "no_matching_signature") return false;
      throw err;
    },
  );

const signatures = (request: ReceivedRequest) => String(request.headers["webhook-signature"]).split(" ");

describe("webhook secrets per environment", () => {
  it("a test key and a live key read different secrets, each naming its environment", async () => {
    const { live, test } = await organization();
    const liveSecret = await secretOf(live);
    const testSecret = await secretOf(test);
    expect(testSecret.secret).not.toBe(liveSecret.secret);
    expect(liveSecret).toEqual({ environment: "live", secret: expect.stringMatching(/^whsec_/) });
    expect(testSecret).toEqual({ environment: "test", secret: expect.stringMatching(/^whsec_/) });
    // Every key of an environment reads that environment's one secret.
    expect(await secretOf(await keyOf(t, live, "live"))).toEqual(liveSecret);
    expect(await secretOf(await keyOf(t, live, "test"))).toEqual(testSecret);
  });

  it("a run's webhook verifies with its environment's secret, not with the other one", async () => {
    const { live, test, hooks } = await organization();
    const liveSecret = (await secretOf(live)).secret;
    const testSecret = (await secretOf(test)).secret;

    const fromLive = await webhookOf(live, hooks);
    expect((JSON.parse(fromLive.body) as WebhookEvent).data.environment).toBe("live");
    expect([await verifies(fromLive, liveSecret), await verifies(fromLive, testSecret)]).toEqual([
      true,
      false,
    ]);

    const fromTest = await webhookOf(test, hooks);
    expect((JSON.parse(fromTest.body) as WebhookEvent).data.environment).toBe("test");
    expect([await verifies(fromTest, liveSecret), await verifies(fromTest, testSecret)]).toEqual([
      false,
      true,
    ]);
  });

  it("rotating through a test key leaves the live secret and live webhooks as they were", async () => {
    const { live, test, hooks } = await organization();
    const liveBefore = await secretOf(live);
    const testBefore = await secretOf(test);

    const rotated = await test.call("POST", "/v1/webhooks/secret/rotate");
    expect(rotated.status).toBe(200);
    expect(await secretOf(live)).toEqual(liveBefore);
    expect(rotated.body).toMatchObject({ environment: "test", previous_secret: testBefore.secret });
    const testNow: string = rotated.body.secret;
    expect([liveBefore.secret, testBefore.secret]).not.toContain(testNow);

    // A live run is signed by the live secret alone: neither test secret verifies it.
    const fromLive = await webhookOf(live, hooks);
    expect(signatures(fromLive)).toHaveLength(1);
    expect(
      await Promise.all([liveBefore.secret, testBefore.secret, testNow].map((s) => verifies(fromLive, s))),
    ).toEqual([true, false, false]);

    // A test run is signed by the new test secret and, through the overlap, the one it replaced.
    const fromTest = await webhookOf(test, hooks);
    expect(signatures(fromTest)).toHaveLength(2);
    expect(
      await Promise.all([liveBefore.secret, testBefore.secret, testNow].map((s) => verifies(fromTest, s))),
    ).toEqual([false, true, true]);

    // A redelivery of the live event is signed afresh with the live secret, still alone.
    const id = String(fromLive.headers["webhook-id"]);
    const seen = hooks.requests.length;
    expect((await live.call("POST", `/v1/webhooks/deliveries/${id}/redeliver`)).status).toBe(202);
    const again = (await hooks.waitFor(seen + 1))[seen] as ReceivedRequest;
    expect(again.headers["webhook-id"]).toBe(id);
    expect([await verifies(again, liveBefore.secret), await verifies(again, testNow)]).toEqual([true, false]);
  });

  it("rotating through a live key leaves the test secret as it was, with its own overlap", async () => {
    const { live, test, hooks } = await organization();
    const liveBefore = await secretOf(live);
    const testBefore = await secretOf(test);

    const rotated = await live.call("POST", "/v1/webhooks/secret/rotate");
    expect(await secretOf(test)).toEqual(testBefore);
    expect(rotated.body).toMatchObject({ environment: "live", previous_secret: liveBefore.secret });

    const fromLive = await webhookOf(live, hooks);
    expect(
      await Promise.all(
        [rotated.body.secret, liveBefore.secret, testBefore.secret].map((s) => verifies(fromLive, s)),
      ),
    ).toEqual([true, true, false]);
    const fromTest = await webhookOf(test, hooks);
    expect(signatures(fromTest)).toHaveLength(1);
    expect(await verifies(fromTest, testBefore.secret)).toBe(true);
  });
});
