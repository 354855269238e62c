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

function rejection(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error("expected verification to fail");
}

describe("signWebhook", () => {
  it("matches the Standard Webhooks reference vector", () => {
    const headers = signWebhook('{"test": 2432232314}', "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", {
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: new Date(1614265330 * 1000),
    });
    expect(headers).toEqual({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
  });

  it("rejects a secret that is not base64", () => {
    expect(() => signWebhook(BODY, "whsec_not base64!")).toThrow(TypeError);
  });
});

describe("verifyWebhook", () => {
  it("accepts a valid webhook and returns the typed event", () => {
    const event = verifyWebhook(BODY, new Headers({ ...signed() }), SECRET, { now: NOW });
    expect(event).toEqual(EVENT);
    expect(event.data.status).toBe("succeeded");
  });

  it("accepts a Uint8Array body with Node-style headers in any case", () => {
    const headers = signed();
    const nodeHeaders: WebhookRequestHeaders = {
      "Webhook-Id": headers["webhook-id"],
      "WEBHOOK-TIMESTAMP": headers["webhook-timestamp"],
      "webhook-signature": [headers["webhook-signature"]],
      "content-type": "application/json",
    };
    expect(verifyWebhook(new TextEncoder().encode(BODY), nodeHeaders, SECRET, { now: NOW })).toEqual(EVENT);
  });

  it("accepts several signatures when one of them matches", () => {
    const good = signed()["webhook-signature"];
    const wrong = signed({ secret: OTHER_SECRET })["webhook-signature"];
    const headers = { ...signed(), "webhook-signature": `${wrong} v1a,c29tZWtleQ== v1,short ${good}` };
    expect(verifyWebhook(BODY, headers, SECRET, { now: NOW })).toEqual(EVENT);
  });

  it("accepts a timestamp within the tolerance either way", () => {
    for (const offset of [-300, 300]) {
      const timestamp = new Date(NOW.getTime() + offset * 1000);
      expect(verifyWebhook(BODY, signed({ timestamp }), SECRET, { now: NOW })).toEqual(EVENT);
    }
  });

  const valid = signed();
  const withoutHeader = (name: keyof typeof valid) => {
    const { [name]: _dropped, ...rest } = valid;
    return rest;
  };
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
      headers: signed({ timestamp: new Date(NOW.getTime() - 301_000) }),
      reason: "timestamp_too_old",
      message: /301 s old/,
    },
    {
      name: "a timestamp beyond a custom tolerance",
      headers: signed({ timestamp: new Date(NOW.getTime() - 11_000) }),
      toleranceSeconds: 10,
      reason: "timestamp_too_old",
      message: /tolerance 10 s/,
    },
    {
      name: "a timestamp in the future",
      headers: signed({ timestamp: new Date(NOW.getTime() + 600_000) }),
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
  ])("rejects $name ($reason)", ({ body, headers, secret, toleranceSeconds, reason, message }) => {
    const error = rejection(() =>
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
  ])("rejects an authentic body that is $name (invalid_payload)", ({ body }) => {
    const error = rejection(() => verifyWebhook(body, signed({ body }), SECRET, { now: NOW }));
    expect(error.reason).toBe("invalid_payload");
  });
});
