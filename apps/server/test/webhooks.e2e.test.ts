/**
 * Webhooks end to end: real refvid servers deliver to real local
 * receivers. Standard Webhooks headers and signatures, one event per terminal run, retries with
 * the same id and bytes on the configured schedule, no redirects followed, receiver timeouts, the
 * submit-time checks of `webhook_url`, and a run's start and progress events (`webhook_events`).
 */
import type { ServerResponse } from "node:http";
import { type Run, verifyWebhook, type WebhookEvent, WebhookVerificationError } from "@refvid/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/manual-clock.js";
import {
  eventually,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
  startTestRefvid,
  type TestRefvid,
} from "./harness.js";

const MODEL_D = "lab-d/model-d/reference-to-video" as const;
/** The harness's REFVID_WEBHOOK_RETRY_DELAYS_MS: the first attempt at once, then two retries 200 ms apart. */
const RETRY_DELAYS_MS = [0, 200, 200];
/** The dispatcher polls its outbox every 500 ms, so a retry may come that much after it is due. */
const DISPATCH_SLACK_MS = 1000;
/** The timeout server's REFVID_RUN_TIMEOUT_MS, reached by moving its clock. */
const RUN_TIMEOUT_MS = 60_000;

const input = (prompt = "a lighthouse at dusk") => ({
  prompt: `[simulate:delay=0] ${prompt}`,
  image_urls: ["https://example.com/ref.png"],
  duration: "4s" as const,
});

let t: TestRefvid; // default test configuration
let timeoutServer: TestRefvid; // REFVID_RUN_TIMEOUT_MS=60000 on a ManualClock
const timeoutClock = new ManualClock();
let slowHookServer: TestRefvid; // REFVID_WEBHOOK_TIMEOUT_MS=300
let strictServer: TestRefvid; // REFVID_ALLOW_LOCAL_URLS=false
const servers: TestRefvid[] = [];
const receivers: Receiver[] = [];
const timers = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  [t, timeoutServer, slowHookServer, strictServer] = await Promise.all([
    startTestRefvid(),
    startTestRefvid(
      { REFVID_RUN_TIMEOUT_MS: String(RUN_TIMEOUT_MS) },
      { clock: timeoutClock, scheduler: timeoutClock },
    ),
    startTestRefvid({ REFVID_WEBHOOK_TIMEOUT_MS: "300" }),
    startTestRefvid({ REFVID_ALLOW_LOCAL_URLS: "false" }),
  ]);
  servers.push(t, timeoutServer, slowHookServer, strictServer);
});

afterAll(async () => {
  for (const timer of timers) clearTimeout(timer);
  await Promise.all(receivers.map((r) => r.close()));
  await Promise.all(servers.map((s) => s.close()));
  for (const s of servers) expect(s.mismatches).toEqual([]);
});

async function receiver(
  respond?: (request: ReceivedRequest, res: ServerResponse, index: number) => void | Promise<void>,
): Promise<Receiver> {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

/**
 * Waits until the run's delivery is `state` and returns it. A delivered or given-up delivery is
 * never sent again, so the receiver's count at that point is final.
 */
function settledDelivery(server: TestRefvid, runId: string, state: "delivered" | "failed") {
  return eventually(
    async () => {
      const [delivery] = await server.refvid.deps.store.listWebhookDeliveries(runId);
      return delivery?.state === state ? delivery : undefined;
    },
    10_000,
    `the delivery to be ${state}`,
  );
}

const header = (request: ReceivedRequest, name: string): string => {
  const value = request.headers[name];
  if (typeof value !== "string") throw new Error(`no ${name} header`);
  return value;
};

/** Strips what legitimately differs between two views of one run: the signed file URL's query. */
function comparable(run: Run): unknown {
  return {
    ...run,
    output: run.output && {
      videos: run.output.videos.map((v) => ({ ...v, url: new URL(v.url).pathname })),
    },
  };
}

describe("a succeeded run with webhook_url", () => {
  it("delivers exactly one signed run.succeeded event carrying the run", async () => {
    const hooks = await receiver();
    const tenant = await t.tenant();
    const other = await t.tenant();
    const submitted = await tenant.client.submit(MODEL_D, input(), {
      webhookUrl: `${hooks.url}/hooks/refvid?source=test`,
    });
    const [delivery] = await hooks.waitFor(1);
    if (!delivery) throw new Error("no delivery");

    expect(delivery.method).toBe("POST");
    expect(delivery.path).toBe("/hooks/refvid?source=test");
    expect(delivery.headers["content-type"]).toMatch(/^application\/json/);
    expect(header(delivery, "webhook-id")).toMatch(/^msg_\S+$/);
    expect(header(delivery, "webhook-timestamp")).toMatch(/^\d+$/);
    expect(Math.abs(Number(header(delivery, "webhook-timestamp")) - Date.now() / 1000)).toBeLessThan(60);
    expect(header(delivery, "webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);

    const { secret } = await tenant.client.getWebhookSecret();
    const event: WebhookEvent = await verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event).toEqual(JSON.parse(delivery.body));
    expect(Object.keys(event).sort()).toEqual(["data", "timestamp", "type"]);
    expect(event.type).toBe("run.succeeded");

    const polled = await tenant.client.getRun(submitted.run_id);
    expect(polled.status).toBe("succeeded");
    expect(event.data.run_id).toBe(submitted.run_id);
    expect(event.data.status).toBe("succeeded");
    expect(event.data.billing).toEqual(polled.billing);
    expect(event.data.billing).toEqual({
      amount: "0.284",
      currency: "usd",
      unit_price: "0.071",
      billable_seconds: 4,
    });
    expect(event.timestamp).toBe(polled.completed_at);
    // The same run as the poll shows, apart from the signed URL's expiry and signature.
    expect(comparable(event.data)).toEqual(comparable(polled));

    // A wrong secret, and another organization's secret, do not verify it.
    const wrong = `whsec_${Buffer.from("not the right secret at all").toString("base64")}`;
    await expect(verifyWebhook(delivery.body, delivery.headers, wrong)).rejects.toThrow(
      WebhookVerificationError,
    );
    const otherSecret = (await other.client.getWebhookSecret()).secret;
    expect(otherSecret).toMatch(/^whsec_/);
    expect(otherSecret).not.toBe(secret);
    try {
      await verifyWebhook(delivery.body, delivery.headers, otherSecret);
      expect.fail("another organization's secret verified the webhook");
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookVerificationError);
      expect((err as WebhookVerificationError).reason).toBe("no_matching_signature");
    }
    // A body changed in transit does not verify either.
    await expect(
      verifyWebhook(delivery.body.replace("succeeded", "failed"), delivery.headers, secret),
    ).rejects.toThrow(WebhookVerificationError);

    // Exactly one delivery: nothing follows a 200.
    expect(await settledDelivery(t, submitted.run_id, "delivered")).toMatchObject({ attempts: 1 });
    expect(await t.refvid.deps.store.listWebhookDeliveries(submitted.run_id)).toHaveLength(1);
    expect(hooks.requests).toHaveLength(1);
  });

  it("sends no webhook when webhook_url was not given", async () => {
    const hooks = await receiver();
    const tenant = await t.tenant();
    const silent = await tenant.client.submit(MODEL_D, input("no hook"));
    const loud = await tenant.client.submit(MODEL_D, input("with hook"), { webhookUrl: hooks.url });
    const [ended] = await Promise.all([
      tenant.client.waitForRun(silent.run_id, { pollIntervalMs: 50 }),
      tenant.client.waitForRun(loud.run_id, { pollIntervalMs: 50 }),
    ]);
    expect(ended.status).toBe("succeeded");
    await settledDelivery(t, loud.run_id, "delivered");
    expect(hooks.requests).toHaveLength(1);
    expect(JSON.parse(hooks.requests[0]?.body ?? "{}").data.run_id).toBe(loud.run_id);
    expect(await t.refvid.deps.store.listWebhookDeliveries(silent.run_id)).toEqual([]);
  });
});

describe("events of the other terminal states", () => {
  async function eventFor(start: (hookUrl: string) => Promise<unknown>) {
    const hooks = await receiver();
    await start(hooks.url);
    const [delivery] = await hooks.waitFor(1);
    if (!delivery) throw new Error("no delivery");
    return delivery;
  }

  it("a failed run sends run.failed", async () => {
    const tenant = await t.tenant();
    const { secret } = await tenant.client.getWebhookSecret();
    const delivery = await eventFor((url) =>
      tenant.client.submit(MODEL_D, input("[simulate:fail]"), { webhookUrl: url }),
    );
    const event = await verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event.type).toBe("run.failed");
    expect(event.data.status).toBe("failed");
    expect(event.data.error).toMatchObject({ type: "provider_error" });
    expect(event.data.billing).toMatchObject({ amount: "0.00", currency: "usd" });
    expect(event.data.output).toBeNull();
  });

  it("a cancelled run sends run.cancelled", async () => {
    const tenant = await t.tenant();
    const { secret } = await tenant.client.getWebhookSecret();
    const delivery = await eventFor(async (url) => {
      const run = await tenant.client.submit(
        MODEL_D,
        { ...input(), prompt: "[simulate:delay=20000] long" },
        { webhookUrl: url },
      );
      return tenant.client.cancelRun(run.run_id);
    });
    const event = await verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event.type).toBe("run.cancelled");
    expect(event.data.status).toBe("cancelled");
    expect(event.data.billing).toMatchObject({ amount: "0.00", currency: "usd" });
  });

  it("a timed-out run sends run.timeout", async () => {
    const tenant = await timeoutServer.tenant();
    const { secret } = await tenant.client.getWebhookSecret();
    const delivery = await eventFor(async (url) => {
      const run = await tenant.client.submit(
        MODEL_D,
        { ...input(), prompt: "[simulate:delay=20000] long" },
        { webhookUrl: url },
      );
      await eventually(
        async () => ((await tenant.client.getRun(run.run_id)).status === "processing" ? true : undefined),
        5000,
        "the run to be processing",
      );
      await timeoutClock.advance(RUN_TIMEOUT_MS);
      // A loop that was mid-step when the clock moved schedules its next step after it: move the
      // clock on a second at a time until the run has ended, as time would.
      await eventually(
        async () => {
          if ((await tenant.client.getRun(run.run_id)).status === "timeout") return true;
          await timeoutClock.advance(1000);
          return undefined;
        },
        30_000,
        "the run to time out",
      );
    });
    const event = await verifyWebhook(delivery.body, delivery.headers, secret);
    expect(event.type).toBe("run.timeout");
    expect(event.data.status).toBe("timeout");
    expect(event.data.error).toMatchObject({ type: "timeout" });
    expect(event.data.billing).toMatchObject({ amount: "0.00", currency: "usd" });
  });
});

describe("retries", () => {
  it("retries non-2xx answers with the same id and bytes, spaced by the schedule", async () => {
    const hooks = await receiver((_req, res, index) => {
      res.writeHead(index < 2 ? 500 : 200).end(index < 2 ? "try again" : "ok");
    });
    const tenant = await t.tenant();
    const { secret } = await tenant.client.getWebhookSecret();
    const run = await tenant.client.submit(MODEL_D, input(), { webhookUrl: hooks.url });
    const attempts = await hooks.waitFor(3);
    const [first] = attempts;
    if (!first) throw new Error("no delivery");
    for (const attempt of attempts) {
      expect(header(attempt, "webhook-id")).toBe(header(first, "webhook-id"));
      expect(attempt.body).toBe(first.body);
      expect((await verifyWebhook(attempt.body, attempt.headers, secret)).data.run_id).toBe(run.run_id);
    }
    for (let i = 1; i < attempts.length; i++) {
      const gap = (attempts[i]?.at ?? 0) - (attempts[i - 1]?.at ?? 0);
      const scheduled = RETRY_DELAYS_MS[i] ?? 0;
      expect(gap).toBeGreaterThanOrEqual(scheduled - 10);
      expect(gap).toBeLessThan(scheduled + DISPATCH_SLACK_MS);
    }
    expect(await settledDelivery(t, run.run_id, "delivered")).toMatchObject({ attempts: 3 });
    expect(hooks.requests).toHaveLength(3);
  });

  it("stops once the schedule is used up", async () => {
    const hooks = await receiver((_req, res) => {
      res.writeHead(500).end("down");
    });
    const tenant = await t.tenant();
    const run = await tenant.client.submit(MODEL_D, input(), { webhookUrl: hooks.url });
    // "0,200,200": the first attempt and two retries, then nothing more.
    const delivery = await settledDelivery(t, run.run_id, "failed");
    expect(delivery).toMatchObject({ attempts: RETRY_DELAYS_MS.length });
    expect(delivery.lastError).toContain("500");
    expect(hooks.requests).toHaveLength(RETRY_DELAYS_MS.length);
  });

  it("never follows a redirect, and retries it", async () => {
    const target = await receiver();
    const hooks = await receiver((_req, res) => {
      res.writeHead(302, { location: `${target.url}/elsewhere` }).end();
    });
    const tenant = await t.tenant();
    const run = await tenant.client.submit(MODEL_D, input(), { webhookUrl: hooks.url });
    await hooks.waitFor(RETRY_DELAYS_MS.length);
    const ids = new Set(hooks.requests.map((r) => header(r, "webhook-id")));
    expect(ids.size).toBe(1);
    const delivery = await settledDelivery(t, run.run_id, "failed");
    expect(target.requests).toEqual([]);
    expect(delivery.lastError).toMatch(/redirect/);
  });

  it("abandons an attempt the receiver does not answer in time, and retries", async () => {
    const hooks = await receiver((_req, res, index) => {
      if (index > 0) {
        res.writeHead(200).end("ok");
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) res.writeHead(200).end("late");
      }, 3000);
      timers.add(timer);
    });
    const tenant = await slowHookServer.tenant();
    const { secret } = await tenant.client.getWebhookSecret();
    const run = await tenant.client.submit(MODEL_D, input(), { webhookUrl: hooks.url });
    const [first, second] = await hooks.waitFor(2);
    if (!first || !second) throw new Error("missing attempts");
    // The retry came long before the first answer would have (3 s): the first attempt was abandoned.
    const gap = second.at - first.at;
    expect(gap).toBeGreaterThanOrEqual(300 + (RETRY_DELAYS_MS[1] ?? 0) - 50);
    expect(gap).toBeLessThan(2500);
    expect(header(second, "webhook-id")).toBe(header(first, "webhook-id"));
    expect(second.body).toBe(first.body);
    await verifyWebhook(second.body, second.headers, secret);
    const delivered = await eventually(
      async () => {
        const [d] = await slowHookServer.refvid.deps.store.listWebhookDeliveries(run.run_id);
        return d?.state === "delivered" ? d : undefined;
      },
      5000,
      "the retry to be recorded as delivered",
    );
    expect(delivered.attempts).toBe(2);
    expect(hooks.requests).toHaveLength(2);
  });
});

describe("webhook_url checks at submit", () => {
  it("accepts plain http to 127.0.0.1 when local URLs are allowed (the non-production default)", async () => {
    const tenant = await t.tenant();
    const res = await tenant.call("POST", `/v1/run/${MODEL_D}`, {
      input: { ...input(), prompt: "[simulate:delay=20000] long" },
      webhook_url: "http://127.0.0.1:9/hook",
    });
    expect(res.status).toBe(201);
    await tenant.client.cancelRun(res.body.run_id).catch(() => {});
  });

  it.each(["http://example.com/hook", "https://127.0.0.1/hook", "https://localhost/hook"])(
    "rejects %s with REFVID_ALLOW_LOCAL_URLS=false",
    async (url) => {
      const tenant = await strictServer.tenant();
      const res = await tenant.call("POST", `/v1/run/${MODEL_D}`, { input: input(), webhook_url: url });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: "invalid_request", code: 400 });
      expect(res.body.error.fields.map((f: { field: string }) => f.field)).toContain("body.webhook_url");
      const account = await tenant.client.getAccount();
      expect(account.concurrency.in_flight).toBe(0);
    },
  );
});

describe("a run's start and progress (webhook_events)", () => {
  /**
   * A run's next progress event is sent a second after the previous one was answered, so it
   * arrives at least that long after the previous one did, however slow the machine.
   */
  const MIN_PROGRESS_GAP_MS = 1000;

  it("sends run.started, rising run.progress at most once a second, then one terminal event last, all signed", async () => {
    const hooks = await receiver();
    const tenant = await t.tenant();
    const { secret } = await tenant.client.getWebhookSecret();
    // The simulated model reports progress in tenths over 4 s: several changes a second.
    const run = await tenant.client.submit(
      MODEL_D,
      { ...input(), prompt: "[simulate:delay=4000] progress" },
      { webhookUrl: `${hooks.url}/hook`, webhookEvents: ["started", "progress", "completed"] },
    );
    const deliveries = await eventually(
      async () => {
        const all = await t.refvid.deps.store.listWebhookDeliveries(run.run_id);
        const ended = all.some((d) => d.eventType === "run.succeeded");
        return ended && all.every((d) => d.state === "delivered") ? all : undefined;
      },
      60_000,
      "every event of the run to be delivered",
    );
    expect(hooks.requests).toHaveLength(deliveries.length);

    const events = await Promise.all(hooks.requests.map((r) => verifyWebhook(r.body, r.headers, secret)));
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("run.started");
    expect(types.at(-1)).toBe("run.succeeded");
    expect(types.slice(1, -1).every((type) => type === "run.progress")).toBe(true);
    expect(types.length).toBeGreaterThanOrEqual(3);
    expect(new Set(hooks.requests.map((r) => header(r, "webhook-id"))).size).toBe(events.length);
    for (const event of events) expect(event.data.run_id).toBe(run.run_id);
    expect(events[0]?.data).toMatchObject({ status: "processing", completed_at: null, billing: null });

    const progress = events.filter((e) => e.type === "run.progress");
    const fractions = progress.map((e) => e.data.progress ?? 0);
    expect(progress.every((e) => e.data.status === "processing")).toBe(true);
    expect(fractions.every((f, i) => f > 0 && f < 1 && (i === 0 || f > (fractions[i - 1] ?? 0)))).toBe(true);
    const arrivals = hooks.requests.filter((_r, i) => events[i]?.type === "run.progress").map((r) => r.at);
    for (let i = 1; i < arrivals.length; i++) {
      expect((arrivals[i] ?? 0) - (arrivals[i - 1] ?? 0)).toBeGreaterThanOrEqual(MIN_PROGRESS_GAP_MS);
    }
    expect(events.at(-1)?.data).toMatchObject({ status: "succeeded", progress: 1 });

    // The delivery log shows each event with its type, newest first.
    const log = await tenant.client.listWebhookDeliveries({ run_id: run.run_id });
    expect(log.data.map((d) => d.event_type)).toEqual([...types].reverse());
    expect(log.data.every((d) => d.state === "delivered" && d.attempts.length === 1)).toBe(true);
  });

  it("a run without webhook_events gets its terminal event alone, however its progress moves", async () => {
    const hooks = await receiver();
    const tenant = await t.tenant();
    const run = await tenant.client.submit(
      MODEL_D,
      { ...input(), prompt: "[simulate:delay=1500] no progress events" },
      { webhookUrl: hooks.url },
    );
    await settledDelivery(t, run.run_id, "delivered");
    expect(hooks.requests).toHaveLength(1);
    expect(JSON.parse(hooks.requests[0]?.body ?? "{}")).toMatchObject({
      type: "run.succeeded",
      data: { run_id: run.run_id },
    });
    expect(await t.refvid.deps.store.listWebhookDeliveries(run.run_id)).toHaveLength(1);
  });

  it.each([
    ["without webhook_url", { webhook_events: ["completed"] }, "body.webhook_events"],
    [
      "with an unknown event",
      { webhook_url: "http://127.0.0.1:9/h", webhook_events: ["ended"] },
      "body.webhook_events[0]",
    ],
    [
      "with an event twice",
      { webhook_url: "http://127.0.0.1:9/h", webhook_events: ["started", "started"] },
      "body.webhook_events",
    ],
    ["with no event", { webhook_url: "http://127.0.0.1:9/h", webhook_events: [] }, "body.webhook_events"],
  ])("refuses webhook_events %s: 400 naming the field, nothing admitted", async (_name, fields, field) => {
    const tenant = await t.tenant();
    const res = await tenant.call("POST", `/v1/run/${MODEL_D}`, { input: input(), ...fields });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "invalid_request", code: 400 });
    expect(res.body.error.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    expect((await tenant.client.getAccount()).concurrency.in_flight).toBe(0);
  });
});

describe("a slow receiver", () => {
  it("does not hold up another organization's delivery", async () => {
    const slow = await receiver((_request, res) => {
      const timer = setTimeout(() => res.writeHead(200).end(), 1500);
      timers.add(timer);
    });
    const fast = await receiver();
    const a = await t.tenant();
    const b = await t.tenant();
    await a.client.submit(MODEL_D, input("slow receiver"), { webhookUrl: `${slow.url}/hook` });
    const [held] = await slow.waitFor(1); // the slow receiver has its delivery and is sitting on it
    await b.client.submit(MODEL_D, input("fast receiver"), { webhookUrl: `${fast.url}/hook` });
    const [quick] = await fast.waitFor(1);
    // Delivered while the slow receiver was still holding its request.
    expect((quick?.at ?? 0) - (held?.at ?? 0)).toBeLessThan(1500);
  });
});
