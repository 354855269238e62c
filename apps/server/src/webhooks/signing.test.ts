/** Which secrets sign a webhook around a rotation, and one header carrying a signature by each. */
import { verifyWebhook, WebhookVerificationError } from "@refvid/client";
import type { WebhookSigningSecret } from "@refvid/store";
import { describe, expect, it } from "vitest";
import { activePreviousSecret, signingSecrets, signWithEach } from "./signing.js";

const T0 = new Date("2030-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const CURRENT = `whsec_${Buffer.from("the current secret").toString("base64")}`;
const PREVIOUS = `whsec_${Buffer.from("the replaced secret").toString("base64")}`;

const org = (previous: WebhookSigningSecret["previous"]): WebhookSigningSecret => ({
  secret: CURRENT,
  previous,
});

describe("signing secrets", () => {
  it("are the current one, and the replaced one until the millisecond it expires", () => {
    const rotated = org({ secret: PREVIOUS, expiresAt: at(1000) });
    expect(signingSecrets(rotated, at(999))).toEqual([CURRENT, PREVIOUS]);
    expect(activePreviousSecret(rotated, at(999))).toEqual({ secret: PREVIOUS, expiresAt: at(1000) });
    expect(signingSecrets(rotated, at(1000))).toEqual([CURRENT]);
    expect(activePreviousSecret(rotated, at(1000))).toBeNull();
    expect(signingSecrets(org(null), T0)).toEqual([CURRENT]);
  });

  it("sign one attempt once per secret, over the same id and timestamp", async () => {
    const body = '{"type":"run.succeeded","data":{}}';
    const headers = await signWithEach(body, [CURRENT, PREVIOUS], { id: "msg_1", timestamp: at(1500) });
    expect(headers["webhook-id"]).toBe("msg_1");
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(at(1500).getTime() / 1000)));
    expect(headers["webhook-signature"]).toMatch(/^v1,\S+ v1,\S+$/);
    for (const secret of [CURRENT, PREVIOUS]) {
      await expect(verifyWebhook(body, headers, secret, { now: at(1500) })).resolves.toMatchObject({
        type: "run.succeeded",
      });
    }
    const other = `whsec_${Buffer.from("someone else's").toString("base64")}`;
    await expect(verifyWebhook(body, headers, other, { now: at(1500) })).rejects.toBeInstanceOf(
      WebhookVerificationError,
    );
    const single = await signWithEach(body, [CURRENT], { id: "msg_1", timestamp: at(1500) });
    expect(headers["webhook-signature"].split(" ")[0]).toBe(single["webhook-signature"]);
  });
});
