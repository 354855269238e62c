/**
 * The webhook signing secret of the caller's environment, and its rotation (webhooks/signing.ts
 * says who signs). Live and test keys are separate worlds: a key reads and rotates only its own
 * environment's secret (docs/decisions.md, "Test keys").
 */
import type { WebhookSecret } from "@refvid/api-types";
import type { Environment, OrganizationRecord } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { newWebhookSecret } from "../ids.js";
import { activePreviousSecret, SECRET_OVERLAP_MS } from "../webhooks/signing.js";

/** The environment's current secret, and the one a rotation replaced while it still signs. */
export function webhookSecretView(
  org: OrganizationRecord,
  environment: Environment,
  now: Date,
): WebhookSecret {
  const secrets = org.webhookSecrets[environment];
  const previous = activePreviousSecret(secrets, now);
  return previous
    ? {
        environment,
        secret: secrets.secret,
        previous_secret: previous.secret,
        previous_secret_expires_at: previous.expiresAt.toISOString(),
      }
    : { environment, secret: secrets.secret };
}

/**
 * The secrets as they are now: read from the store, not from the organization authentication
 * loaded, which may be up to a second old (auth/key-cache.ts).
 */
export async function webhookSecret(deps: AppDeps, caller: Caller): Promise<WebhookSecret> {
  const org = await deps.store.getOrganization(caller.organization.id);
  // Organizations are never deleted: the caller authenticated with a key of this one.
  if (!org) throw new Error(`organization ${caller.organization.id} is gone`);
  return webhookSecretView(org, caller.apiKey.environment, deps.clock.now());
}

/** A new secret for the caller's environment; its current one keeps signing alongside it for `SECRET_OVERLAP_MS`. */
export async function rotateWebhookSecret(deps: AppDeps, caller: Caller): Promise<WebhookSecret> {
  const now = deps.clock.now();
  const { environment } = caller.apiKey;
  const org = await deps.store.rotateWebhookSecret({
    organizationId: caller.organization.id,
    environment,
    secret: newWebhookSecret(),
    previousExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
  });
  // Organizations are never deleted: the caller authenticated with a key of this one.
  if (!org) throw new Error(`organization ${caller.organization.id} is gone`);
  deps.logger.info({ organizationId: org.id, environment }, "webhook secret rotated");
  return webhookSecretView(org, environment, now);
}
