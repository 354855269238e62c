/**
 * Which secrets sign a webhook, and the signing itself. After a rotation the replaced secret keeps
 * signing alongside the new one for `SECRET_OVERLAP_MS`, each as its own `v1,` signature in
 * `webhook-signature` (Standard Webhooks allows several, space-separated), so a receiver that
 * still holds the old secret keeps verifying until it has deployed the new one.
 */
import { signWebhook, type WebhookSignatureHeaders } from "@refvid/client";
import type { OrganizationRecord } from "@refvid/store";

/** How long a replaced secret keeps signing after `POST /v1/webhooks/secret/rotate`. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/** The secret a rotation replaced, while it still signs at `now`. */
export function activePreviousSecret(
  org: OrganizationRecord,
  now: Date,
): { secret: string; expiresAt: Date } | null {
  const previous = org.previousWebhookSecret;
  return previous && previous.expiresAt.getTime() > now.getTime() ? previous : null;
}

/** The secrets that sign a delivery sent at `now`: the current one first. */
export function signingSecrets(org: OrganizationRecord, now: Date): string[] {
  const previous = activePreviousSecret(org, now);
  return previous ? [org.webhookSecret, previous.secret] : [org.webhookSecret];
}

/** The Standard Webhooks headers of one attempt: one signature per secret over the same id and timestamp. */
export async function signWithEach(
  payload: string,
  secrets: readonly string[],
  options: { id: string; timestamp: Date },
): Promise<WebhookSignatureHeaders> {
  const signed = await Promise.all(secrets.map((secret) => signWebhook(payload, secret, options)));
  const [first] = signed;
  if (!first) throw new Error("no secret to sign with");
  return { ...first, "webhook-signature": signed.map((h) => h["webhook-signature"]).join(" ") };
}
