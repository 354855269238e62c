import type { WebhookEvent } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { makeRun } from "../test/server.js";
import {
  signWebhook,
  verifyWebhook,
  type WebhookRequestHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from "./webhooks.js";

const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
const NOW = new Date("2025-06-01T12:00:00Z");
const ID = "msg_0f8c3a52-5d0e-4b8e-9d3c-2a7f1e6b9c41";

const EVENT: WebhookEvent = {
  type: "run.succeeded",
  timestamp: "2025-06-01T11:59:58Z",
  data: makeRun({ status: "succeeded", progress: 1 }),
};
const BODY = JSON.stringify(EVENT);

function signed(overrides: { body?: string; secret?: string; timestamp?: Date } = {}) {
  return signWebhook(overrides.body ?? BODY, overrides.secret ?? SECRET, {
    id: ID,
    timestamp: overrides.timestamp ?? NOW,
  });
}

async function rejection(verification: Promise<unknown>): Promise<WebhookVerificationError> {
  const error = await verification.then(
    () => new Error("expected verification to fail"),
    (e: unknown) => e,
  );
  if (error instanceof WebhookVerificationError) return error;
  throw error;
}

// Signed once for the table of rejections below (signing is asynchronous; tables are not).
const valid = await signed();
const at = (seconds: number) => signed({ timestamp: new Date(NOW.getTime() + seconds * 1000) });
const [stale, pastCustomTolerance, future] = await Promise.all([at(-301), at(-11), at(600)]);
const withoutHeader = (name: keyof typeof valid) => {
  const { [name]: _dropped, ...rest } = valid;
  return rest;
};

describe("signWebhook", () => {
  it("matches the Standard Webhooks reference vector", async () => {
    const headers = await signWebhook('{"test": 2432232314}', "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", {
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: new Date(1614265330 * 1000),
    });
    expect(headers).toEqual({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  it("rejects a secret that is not base64", async () => {
    await expect(signWebhook(BODY, "whsec_not base64!")).rejects.toThrow(TypeError);
  });

  it("uses a fresh msg_<uuid> id and the current time by default", async () => {
    const before = Math.floor(Date.now() / 1000);
    const [a, b] = await Promise.all([signWebhook(BODY, SECRET), signWebhook(BODY, SECRET)]);
    expect(a["webhook-id"]).toMatch(
      /^msg_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(a["webhook-id"]).not.toBe(b["webhook-id"]);
    expect(Number(a["webhook-timestamp"])).toBeGreaterThanOrEqual(before);
    await expect(verifyWebhook(BODY, a, SECRET)).resolves.toEqual(EVENT);
  });
});

describe("verifyWebhook", () => {
  it("accepts a valid webhook and returns the typed event", async () => {
    const event = await verifyWebhook(BODY, new Headers({ ...(await signed()) }), SECRET, { now: NOW });
    expect(event).toEqual(EVENT);
    expect(event.data.status).toBe("succeeded");
  });

  it("accepts a Uint8Array body with Node-style headers in any case", async () => {
    const headers = await signed();
    const nodeHeaders: WebhookRequestHeaders = {
      "Webhook-Id": headers["webhook-id"],
      "WEBHOOK-TIMESTAMP": headers["webhook-timestamp"],
      "webhook-signature": [headers["webhook-signature"]],
      "content-type": "application/json",
    };
    await expect(
      verifyWebhook(new TextEncoder().encode(BODY), nodeHeaders, SECRET, { now: NOW }),
    ).resolves.toEqual(EVENT);
  });

  it("accepts several signatures when one of them matches", async () => {
    const good = (await signed())["webhook-signature"];
    const wrong = (await signed({ secret: OTHER_SECRET }))["webhook-signature"];
    const headers = {
      ...(await signed()),
      "webhook-signature": `${wrong} v1a,c29tZWtleQ== v1,short v1,!!! ${good}`,
    };
    await expect(verifyWebhook(BODY, headers, SECRET, { now: NOW })).resolves.toEqual(EVENT);
  });

  it("accepts a timestamp within the tolerance either way", async () => {
    for (const offset of [-300, 300]) {
      const timestamp = new Date(NOW.getTime() + offset * 1000);
      await expect(verifyWebhook(BODY, await signed({ timestamp }), SECRET, { now: NOW })).resolves.toEqual(
        EVENT,
      );
    }
  });

  it("accepts an event type and run status newer than this client", async () => {
    const body = JSON.stringify({
      ...EVENT,
      type: "run.archived",
      data: { ...EVENT.data, status: "archived" },
    });
    const event = await verifyWebhook(body, await signed({ body }), SECRET, { now: NOW });
    expect(event).toMatchObject({ type: "run.archived", data: { status: "archived" } });
  });

  it.each<{
    name: string;
    body?: string;
    headers: WebhookRequestHeaders;
    secret?: string;
    toleranceSeconds?: number;
    reason: WebhookVerificationReason;
    message: RegExp;
  }>([
    {
      name: "a tampered body",
      body: BODY.replace("succeeded", "cancelled"),
      headers: valid,
      reason: "no_matching_signature",
      message: /no v1 signature/,
    },
    {
      name: "a tampered webhook-id",
      headers: { ...valid, "webhook-id": "msg_other" },
      reason: "no_matching_signature",
      message: /no v1 signature/,
    },
    {
      name: "the wrong secret",
      headers: valid,
      secret: OTHER_SECRET,
      reason: "no_matching_signature",
      message: /no v1 signature/,
    },
    {
      name: "a stale timestamp",
      headers: stale,
      reason: "timestamp_too_old",
      message: /301 s old/,
    },
    {
      name: "a timestamp beyond a custom tolerance",
      headers: pastCustomTolerance,
      toleranceSeconds: 10,
      reason: "timestamp_too_old",
      message: /tolerance 10 s/,
    },
    {
      name: "a timestamp in the future",
      headers: future,
      reason: "timestamp_too_new",
      message: /in the future/,
    },
    {
      name: "a malformed timestamp",
      headers: { ...valid, "webhook-timestamp": "2025-06-01T12:00:00Z" },
      reason: "invalid_timestamp",
      message: /not unix seconds/,
    },
    {
      name: "no webhook-id",
      headers: withoutHeader("webhook-id"),
      reason: "missing_header",
      message: /webhook-id/,
    },
    {
      name: "no webhook-timestamp",
      headers: withoutHeader("webhook-timestamp"),
      reason: "missing_header",
      message: /webhook-timestamp/,
    },
    {
      name: "no webhook-signature",
      headers: withoutHeader("webhook-signature"),
      reason: "missing_header",
      message: /webhook-signature/,
    },
    {
      name: "no headers at all",
      headers: new Headers(),
      reason: "missing_header",
      message: /webhook-id, webhook-timestamp, webhook-signature/,
    },
    {
      name: "only signatures of another version",
      headers: { ...valid, "webhook-signature": valid["webhook-signature"].replace("v1,", "v2,") },
      reason: "no_matching_signature",
      message: /no v1 signature/,
    },
    {
      name: "a secret that is not base64",
      headers: valid,
      secret: "whsec_%%%",
      reason: "invalid_secret",
      message: /whsec_/,
    },
    {
      name: "a signature that is not base64",
      headers: { ...valid, "webhook-signature": "v1,%%%%" },
      reason: "no_matching_signature",
      message: /no v1 signature/,
    },
  ])("rejects $name ($reason)", async ({ body, headers, secret, toleranceSeconds, reason, message }) => {
    const error = await rejection(
      verifyWebhook(body ?? BODY, headers, secret ?? SECRET, {
        now: NOW,
        ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }),
      }),
    );
    expect(error.reason).toBe(reason);
    expect(error.message).toMatch(message);
  });

  it.each([
    { name: "not JSON", body: "not json" },
    { name: "JSON but not an event", body: '{"hello":"world"}' },
  ])("rejects an authentic body that is $name (invalid_payload)", async ({ body }) => {
    const error = await rejection(verifyWebhook(body, await signed({ body }), SECRET, { now: NOW }));
    expect(error.reason).toBe("invalid_payload");
  });
});
