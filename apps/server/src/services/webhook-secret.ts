/** The organization's webhook signing secret, and its rotation (webhooks/signing.ts says who signs). */
import type { WebhookSecret } from "@refvid/api-types";
import type { OrganizationRecord } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { newWebhookSecret } from "../ids.js";
import { activePreviousSecret, SECRET_OVERLAP_MS } from "../webhooks/signing.js";

/** The current secret, and the one a rotation replaced while it still signs. */
export function webhookSecretView(org: OrganizationRecord, now: Date): WebhookSecret {
  const previous = activePreviousSecret(org, now);
  return previous
    ? {
        secret: org.webhookSecret,
        previous_secret: previous.secret,
        previous_secret_expires_at: previous.expiresAt.toISOString(),
      }
    : { secret: org.webhookSecret };
}

/**
 * The organization's secrets as they are now: read from the store, not from the organization
 * authentication loaded, which may be up to a second old (auth/key-cache.ts).
 */
export async function webhookSecret(deps: AppDeps, caller: Caller): Promise<WebhookSecret> {
  const org = await deps.store.getOrganization(caller.organization.id);
  // Organizations are never deleted: the caller authenticated with a key of this one.
  if (!org) throw new Error(`organization ${caller.organization.id} is gone`);
  return webhookSecretView(org, deps.clock.now());
}

/** A new secret; the current one keeps signing alongside it for `SECRET_OVERLAP_MS`. */
export async function rotateWebhookSecret(deps: AppDeps, caller: Caller): Promise<WebhookSecret> {
  const now = deps.clock.now();
  const org = await deps.store.rotateWebhookSecret({
    organizationId: caller.organization.id,
    secret: newWebhookSecret(),
    previousExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
  });
  // Organizations are never deleted: the caller authenticated with a key of this one.
  if (!org) throw new Error(`organization ${caller.organization.id} is gone`);
  deps.logger.info({ organizationId: org.id }, "webhook secret rotated");
  return webhookSecretView(org, now);
}
