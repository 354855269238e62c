/**
 * Which secrets sign a webhook, and the signing itself. A run's webhooks are signed with the secret
 * of the run's environment (docs/decisions.md, "Test keys"). After a rotation the replaced secret
 * keeps signing alongside the new one for `SECRET_OVERLAP_MS`, each as its own `v1,` signature in
 * `webhook-signature` (Standard Webhooks allows several, space-separated), so a receiver that
 * still holds the old secret keeps verifying until it has deployed the new one.
 */
import { signWebhook, type WebhookSignatureHeaders } from "@refvid/client";
import type { WebhookSigningSecret } from "@refvid/store";

/** How long a replaced secret keeps signing after `POST /v1/webhooks/secret/rotate`. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

/** The secret a rotation of this environment replaced, while it still signs at `now`. */
export function activePreviousSecret(
  secrets: WebhookSigningSecret,
  now: Date,
): { secret: string; expiresAt: Date } | null {
  const { previous } = secrets;
  return previous && previous.expiresAt.getTime() > now.getTime() ? previous : null;
}

/** The secrets that sign a delivery of this environment sent at `now`: the current one first. */
export function signingSecrets(secrets: WebhookSigningSecret, now: Date): string[] {
  const previous = activePreviousSecret(secrets, now);
  return previous ? [secrets.secret, previous.secret] : [secrets.secret];
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
