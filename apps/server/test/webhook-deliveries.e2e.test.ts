/**
 * The webhook delivery log, redelivery and secret rotation end to end: real refvid servers
 * deliver to real local receivers, and the log is read through the API. One server runs on the
 * system clock; another reads a ManualClock (its timers stay real), so a test moves past retry
 * times and the 24 h overlap of a rotated secret at once.
 */
import type { ServerResponse } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { createRefvidClient, verifyWebhook, WebhookVerificationError } from "@refvid/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/manual-clock.js";
import {
  eventually,
  type RawResponse,
  type ReceivedRequest,
  type Receiver,
  rawRequest,
  startReceiver,
  startTestRefvid,
  type Tenant,
  type TestRefvid,
} from "./harness.js";

const MODEL_D = "lab-d/model-d/reference-to-video" as const;
const FAST = 100_000;
const HOUR_MS = 3_600_000;
const input = (prompt = "a lighthouse at dusk") => ({
  prompt: `[simulate:delay=0] ${prompt}`,
  image_urls: ["https://example.com/ref.png"],
  duration: "4s" as const,
});

let t: TestRefvid; // the system clock; retries 200 ms apart
let clocked: TestRefvid; // reads `clock`; retries 60 s apart on it
const clock = new ManualClock();
const receivers: Pick<Receiver, "close">[] = [];

beforeAll(async () => {
  [t, clocked] = await Promise.all([
    startTestRefvid(),
    startTestRefvid({ REFVID_WEBHOOK_RETRY_DELAYS_MS: "0,60000,60000" }, { clock }),
  ]);
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await Promise.all([t, clocked].map((s) => s.close()));
  for (const s of [t, clocked]) expect(s.mismatches).toEqual([]);
});

async function receiver(
  respond?: (request: ReceivedRequest, res: ServerResponse, index: number) => void,
): Promise<Receiver> {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

/** Answers `statuses[i]` to the i-th request, 200 after the list. */
const answering = (...statuses: number[]) =>
  receiver((_request, res, index) => {
    res.writeHead(statuses[index] ?? 200).end();
  });

/**
 * A URL whose server drops every connection before answering: every attempt fails to connect.
 * It holds its port until the file ends; a closed port could be taken by another test's
 * server in the meantime and answer.
 */
async function deadUrl(): Promise<string> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receivers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

const header = (request: ReceivedRequest | undefined, name: string): string => {
  const value = request?.headers[name];
  if (typeof value !== "string") throw new Error(`no ${name} header`);
  return value;
};

/** Submits a run with a webhook and waits for the run's end; its id. */
async function endedRun(tenant: Tenant, hookUrl: string): Promise<string> {
  const run = await tenant.client.submit(MODEL_D, input(), { webhookUrl: hookUrl });
  await tenant.client.waitForRun(run.run_id, { pollIntervalMs: 20 });
  return run.run_id;
}

const deliveryPath = (id: string) => `/v1/webhooks/deliveries/${encodeURIComponent(id)}`;

/** The delivery once `done` holds for it (read through the API). */
function deliveryWhen(tenant: Tenant, id: string, done: (body: any) => boolean, what: string) {
  return eventually(
    async () => {
      const res = await tenant.call("GET", deliveryPath(id));
      expect(res.status).toBe(200);
      return done(res.body) ? res.body : undefined;
    },
    10_000,
    what,
  );
}

const settled = (tenant: Tenant, id: string, state: "delivered" | "failed", attempts: number) =>
  deliveryWhen(
    tenant,
    id,
    (d) => d.state === state && d.attempts.length === attempts,
    `${id} ${state} after ${attempts} attempts`,
  );

/** The id of the run's delivery, from the log. */
async function deliveryIdOf(tenant: Tenant, runId: string): Promise<string> {
  const res = await tenant.call("GET", `/v1/webhooks/deliveries?run_id=${runId}`);
  expect(res.body.data).toHaveLength(1);
  return res.body.data[0].id;
}

const list = (tenant: Tenant, query: string): Promise<RawResponse> =>
  tenant.call("GET", `/v1/webhooks/deliveries${query}`);

describe("the delivery log", () => {
  it("shows each attempt with its time, status and duration: a failing receiver, then a good one", async () => {
    const hooks = await receiver((_request, res, index) => {
      if (index === 0) setTimeout(() => res.writeHead(500).end("try again"), 150);
      else res.writeHead(200).end("ok");
    });
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const runId = await endedRun(tenant, `${hooks.url}/hook?source=log`);
    const [first, second] = await hooks.waitFor(2);
    const id = header(first, "webhook-id");
    const delivery = await settled(tenant, id, "delivered", 2);

    const run = await tenant.client.getRun(runId);
    expect(delivery).toMatchObject({
      id,
      run_id: runId,
      environment: "live",
      url: `${hooks.url}/hook?source=log`,
      event_type: "run.succeeded",
      state: "delivered",
      created_at: run.completed_at,
      next_attempt_at: null,
    });
    expect(delivery.attempts).toEqual([
      { attempted_at: expect.any(String), status: 500, error: "HTTP 500", duration_ms: expect.any(Number) },
      { attempted_at: expect.any(String), status: 200, error: null, duration_ms: expect.any(Number) },
    ]);
    const [slow, good] = delivery.attempts;
    expect(slow.duration_ms).toBeGreaterThanOrEqual(150);
    expect(good.duration_ms).toBeLessThan(slow.duration_ms);
    // Each attempt is logged at the time it was signed with.
    for (const [attempt, request] of [
      [slow, first],
      [good, second],
    ]) {
      const seconds = Math.floor(Date.parse(attempt.attempted_at) / 1000);
      expect(String(seconds)).toBe(header(request, "webhook-timestamp"));
    }
    expect(Date.parse(good.attempted_at) - Date.parse(slow.attempted_at)).toBeGreaterThanOrEqual(150 + 200);
    expect((await list(tenant, `?run_id=${runId}`)).body).toEqual({
      data: [delivery],
      has_more: false,
      next_cursor: null,
    });
  });

  it("shows attempts that got no answer, and the delivery failed once the retries are used up", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const runId = await endedRun(tenant, await deadUrl());
    const delivery = await settled(tenant, await deliveryIdOf(tenant, runId), "failed", 3);
    expect(delivery.next_attempt_at).toBeNull();
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ status: null, error: expect.stringMatching(/^connection failed: /) });
    }
  });

  it("lists newest first, filtered by run and by state, page by page", async () => {
    const hooks = await answering();
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const dead = await deadUrl();
    const runs: string[] = [];
    for (const url of [hooks.url, dead, hooks.url, hooks.url]) runs.push(await endedRun(tenant, url));
    const ids = await Promise.all(runs.map((runId) => deliveryIdOf(tenant, runId)));
    await Promise.all(
      ids.map((id, i) => settled(tenant, id, i === 1 ? "failed" : "delivered", i === 1 ? 3 : 1)),
    );
    const idsOf = (res: RawResponse) => res.body.data.map((d: { id: string }) => d.id);

    const first = await list(tenant, "?limit=2");
    expect(first.status).toBe(200);
    expect(idsOf(first)).toEqual([ids[3], ids[2]]);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const second = await list(tenant, `?limit=2&cursor=${first.body.next_cursor}`);
    expect(idsOf(second)).toEqual([ids[1], ids[0]]);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    const all = await list(tenant, "");
    expect(idsOf(all)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    expect(all.body.data.map((d: { run_id: string }) => d.run_id)).toEqual([...runs].reverse());

    expect(idsOf(await list(tenant, "?state=delivered"))).toEqual([ids[3], ids[2], ids[0]]);
    expect(idsOf(await list(tenant, "?state=failed"))).toEqual([ids[1]]);
    expect(idsOf(await list(tenant, "?state=pending"))).toEqual([]);
    expect(idsOf(await list(tenant, `?run_id=${runs[2]}`))).toEqual([ids[2]]);
    expect(idsOf(await list(tenant, `?run_id=${runs[2]}&state=failed`))).toEqual([]);
    expect(idsOf(await list(tenant, "?run_id=run_00000000-0000-4000-8000-000000000000"))).toEqual([]);

    for (const query of [
      `?state=failed&limit=2&cursor=${first.body.next_cursor}`, // another listing's cursor
      "?cursor=not-a-cursor",
      "?limit=0",
      "?limit=101",
      "?state=lost",
    ]) {
      const res = await list(tenant, query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.type).toBe("invalid_request");
    }
  });
});

describe("redelivery", () => {
  it("sends the same id and body bytes again, signed at the time of sending", async () => {
    const hooks = await answering();
    const tenant = await clocked.tenant({ rateLimitPerMinute: FAST });
    const { secret } = await tenant.client.getWebhookSecret();
    await endedRun(tenant, hooks.url);
    const [first] = await hooks.waitFor(1);
    const id = header(first, "webhook-id");
    await settled(tenant, id, "delivered", 1);

    await clock.advance(10 * 60_000);
    const queued = await tenant.call("POST", `${deliveryPath(id)}/redeliver`);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ id, state: "pending", next_attempt_at: clock.now().toISOString() });
    expect(queued.body.attempts).toHaveLength(1);

    const [, again] = await hooks.waitFor(2);
    expect(header(again, "webhook-id")).toBe(id);
    expect(again?.body).toBe(first?.body);
    expect(Number(header(again, "webhook-timestamp"))).toBe(Number(header(first, "webhook-timestamp")) + 600);
    const now = clock.now();
    await verifyWebhook(again?.body ?? "", again?.headers ?? {}, secret, { now });
    // The first request's signature is too old to verify now; the redelivery's is fresh.
    await expect(
      verifyWebhook(first?.body ?? "", first?.headers ?? {}, secret, { now }),
    ).rejects.toMatchObject({
      reason: "timestamp_too_old",
    });
    await settled(tenant, id, "delivered", 2);
  });

  it("gives a delivered or failed delivery one more attempt, which is not retried", async () => {
    const hooks = await answering(200, 503);
    const tenant = await clocked.tenant({ rateLimitPerMinute: FAST });
    await endedRun(tenant, hooks.url);
    const [first] = await hooks.waitFor(1);
    const id = header(first, "webhook-id");
    await settled(tenant, id, "delivered", 1);

    const redeliver = () => tenant.call("POST", `${deliveryPath(id)}/redeliver`);
    expect((await redeliver()).body).toMatchObject({ state: "pending" });
    // The schedule has retries left, yet the failed redelivery ends the delivery as failed.
    const failed = await settled(tenant, id, "failed", 2);
    expect(failed).toMatchObject({ next_attempt_at: null });
    expect(failed.attempts[1]).toMatchObject({ status: 503, error: "HTTP 503" });

    expect((await redeliver()).body).toMatchObject({ state: "pending" });
    await settled(tenant, id, "delivered", 3);
    expect(hooks.requests.map((r) => header(r, "webhook-id"))).toEqual([id, id, id]);
  });

  it("moves a pending delivery's next attempt to now", async () => {
    const hooks = await answering(500);
    const tenant = await clocked.tenant({ rateLimitPerMinute: FAST });
    await endedRun(tenant, hooks.url);
    const [first] = await hooks.waitFor(1);
    const id = header(first, "webhook-id");
    const waiting = await deliveryWhen(tenant, id, (d) => d.attempts.length === 1, "the first attempt");
    expect(waiting).toMatchObject({
      state: "pending",
      next_attempt_at: new Date(clock.now().getTime() + 60_000).toISOString(),
    });

    const queued = await tenant.call("POST", `${deliveryPath(id)}/redeliver`);
    expect(queued.body).toMatchObject({ state: "pending", next_attempt_at: clock.now().toISOString() });
    await settled(tenant, id, "delivered", 2); // without the clock moving
  });
});

describe("secret rotation", () => {
  const verifies = (request: ReceivedRequest | undefined, secret: string) =>
    verifyWebhook(request?.body ?? "", request?.headers ?? {}, secret, { now: clock.now() }).then(
      () => true,
      (err) => {
        expect(err).toBeInstanceOf(WebhookVerificationError);
        expect((err as WebhookVerificationError).reason).toBe("no_matching_signature");
        return false;
      },
    );

  it("signs with the old and the new secret for 24 hours, then with the new one only", async () => {
    const hooks = await answering();
    const tenant = await clocked.tenant({ rateLimitPerMinute: FAST });
    const old = await tenant.call("GET", "/v1/webhooks/secret");
    expect(Object.keys(old.body)).toEqual(["environment", "secret"]);

    const rotated = await tenant.call("POST", "/v1/webhooks/secret/rotate");
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.body.secret;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old.body.secret);
    expect(rotated.body).toEqual({
      environment: "live",
      secret: fresh,
      previous_secret: old.body.secret,
      previous_secret_expires_at: new Date(clock.now().getTime() + 24 * HOUR_MS).toISOString(),
    });
    expect((await tenant.call("GET", "/v1/webhooks/secret")).body).toEqual(rotated.body);

    await endedRun(tenant, hooks.url);
    const [first] = await hooks.waitFor(1);
    const id = header(first, "webhook-id");
    expect(header(first, "webhook-signature").split(" ")).toHaveLength(2);
    expect([await verifies(first, old.body.secret), await verifies(first, fresh)]).toEqual([true, true]);
    await settled(tenant, id, "delivered", 1);

    // The last second of the overlap: both still sign.
    await clock.advance(24 * HOUR_MS - 1000);
    await tenant.call("POST", `${deliveryPath(id)}/redeliver`);
    const [, late] = await hooks.waitFor(2);
    expect([await verifies(late, old.body.secret), await verifies(late, fresh)]).toEqual([true, true]);
    await settled(tenant, id, "delivered", 2);

    await clock.advance(1000);
    expect((await tenant.call("GET", "/v1/webhooks/secret")).body).toEqual({
      environment: "live",
      secret: fresh,
    });
    await tenant.call("POST", `${deliveryPath(id)}/redeliver`);
    const [, , after] = await hooks.waitFor(3);
    expect(header(after, "webhook-signature").split(" ")).toHaveLength(1);
    expect([await verifies(after, old.body.secret), await verifies(after, fresh)]).toEqual([false, true]);
    expect(after?.body).toBe(first?.body);
  });

  it("ends the older secret at once when rotating again within the overlap", async () => {
    const hooks = await answering();
    const tenant = await clocked.tenant({ rateLimitPerMinute: FAST });
    const { secret: s0 } = await tenant.client.getWebhookSecret();
    const s1 = (await tenant.call("POST", "/v1/webhooks/secret/rotate")).body.secret;
    const s2 = (await tenant.call("POST", "/v1/webhooks/secret/rotate")).body.secret;
    await endedRun(tenant, hooks.url);
    const [request] = await hooks.waitFor(1);
    const results = [await verifies(request, s0), await verifies(request, s1), await verifies(request, s2)];
    expect(results).toEqual([false, true, true]);
  });
});

describe("who sees a delivery", () => {
  it("another organization's delivery is a 404, and cannot be redelivered", async () => {
    const hooks = await answering();
    const owner = await t.tenant({ rateLimitPerMinute: FAST });
    const stranger = await t.tenant({ rateLimitPerMinute: FAST });
    const runId = await endedRun(owner, hooks.url);
    const id = await deliveryIdOf(owner, runId);
    await settled(owner, id, "delivered", 1);

    for (const [method, path] of [
      ["GET", deliveryPath(id)],
      ["POST", `${deliveryPath(id)}/redeliver`],
      ["GET", deliveryPath("msg_unknown")],
    ] as const) {
      const res = await stranger.call(method, path);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ type: "delivery_not_found", code: 404 });
    }
    expect((await list(stranger, "")).body.data).toEqual([]);
    expect((await list(stranger, `?run_id=${runId}`)).body.data).toEqual([]);
    // The refused redelivery changed nothing.
    expect((await owner.call("GET", deliveryPath(id))).body).toMatchObject({ state: "delivered" });
  });

  it("a test key does not see a live run's deliveries, nor a live key a test run's", async () => {
    const hooks = await answering();
    const live = await t.tenant({ rateLimitPerMinute: FAST });
    const created = await t.admin("POST", `/admin/v1/organizations/${live.organizationId}/api-keys`, {
      environment: "test",
      rate_limit_per_minute: FAST,
    });
    const apiKey: string = created.body.key;
    const test: Tenant = {
      ...live,
      apiKey,
      client: createRefvidClient({ baseUrl: t.url, apiKey, retry: { maxRetries: 0 } }),
      call: (method, path, body, headers = {}) =>
        rawRequest(t.url, method, path, { body, headers: { authorization: `Key ${apiKey}`, ...headers } }),
    };
    const liveId = await deliveryIdOf(live, await endedRun(live, hooks.url));
    const testId = await deliveryIdOf(test, await endedRun(test, hooks.url));
    expect((await test.call("GET", deliveryPath(testId))).body.environment).toBe("test");

    for (const [key, own, other] of [
      [live, liveId, testId],
      [test, testId, liveId],
    ] as const) {
      expect((await key.call("GET", deliveryPath(other))).status).toBe(404);
      expect((await key.call("POST", `${deliveryPath(other)}/redeliver`)).status).toBe(404);
      expect((await list(key, "")).body.data.map((d: { id: string }) => d.id)).toEqual([own]);
    }
  });
});

describe("@refvid/client", () => {
  it("lists, reads and redelivers deliveries, and rotates the secret", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
    const hooks = await answering(200, 200);
    const runId = await endedRun(tenant, `${hooks.url}/hook`);
    await hooks.waitFor(1);
    // The receiver has the delivery; the attempt is recorded once its answer is read.
    const page = await eventually(
      async () => {
        const listed = await tenant.client.listWebhookDeliveries({ run_id: runId });
        return listed.data[0]?.state === "delivered" ? listed : undefined;
      },
      10_000,
      "the delivery recorded as delivered",
    );
    expect(page.data).toHaveLength(1);
    const delivery = page.data[0] as (typeof page.data)[number];
    expect(delivery).toMatchObject({ run_id: runId, state: "delivered", event_type: "run.succeeded" });
    expect(await tenant.client.getWebhookDelivery(delivery.id)).toMatchObject({ id: delivery.id });
    expect((await tenant.client.redeliverWebhook(delivery.id)).id).toBe(delivery.id);
    await hooks.waitFor(2);
    const before = (await tenant.client.getWebhookSecret()).secret;
    const rotated = await tenant.client.rotateWebhookSecret();
    expect(rotated.secret).not.toBe(before);
    expect(rotated.previous_secret).toBe(before);
  });
});
