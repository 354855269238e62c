/**
 * The webhook delivery log: the deliveries of the caller's organization and environment, newest
 * first with keyset cursors, one by id, and redelivery. A delivery belongs to its run's
 * environment: like a run, one of another organization or of the other environment is a 404.
 */
import type { components } from "@refvid/api-types";
import { RefvidError } from "@refvid/core";
import type { WebhookDelivery, WebhookDeliveryLog } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { pageOf, pageStart } from "./keyset-page.js";

type ApiWebhookDelivery = components["schemas"]["WebhookDelivery"];
type ApiWebhookDeliveryPage = components["schemas"]["WebhookDeliveryPage"];

export class DeliveryNotFoundError extends RefvidError {
  readonly status = 404;
  readonly type = "delivery_not_found";
  constructor(id: string) {
    super(`No webhook delivery ${id} in this organization.`);
  }
}

export interface DeliveryQuery {
  runId?: string;
  state?: WebhookDelivery["state"];
  limit?: number;
  cursor?: string;
}

export async function listDeliveries(
  deps: AppDeps,
  caller: Caller,
  query: DeliveryQuery,
): Promise<ApiWebhookDeliveryPage> {
  const { cursor, limit = 20, runId, state } = query;
  const start = pageStart(deps.cursors, {
    listing: "delivery log",
    cursor,
    filters: { runId, state },
    field: "query.cursor",
  });
  const found = await deps.store.searchWebhookDeliveries({
    organizationId: caller.organization.id,
    environment: caller.apiKey.environment,
    limit: limit + 1,
    ...(runId !== undefined ? { runId } : {}),
    ...(state ? { state } : {}),
    ...(start.after ? { after: start.after } : {}),
  });
  return pageOf(found, limit, start, toApiDelivery);
}

export async function getDelivery(deps: AppDeps, caller: Caller, id: string): Promise<ApiWebhookDelivery> {
  const delivery = await deps.store.getWebhookDelivery(caller.organization.id, id);
  if (!delivery || delivery.environment !== caller.apiKey.environment) throw new DeliveryNotFoundError(id);
  return toApiDelivery(delivery);
}

/** One more attempt, due now; the dispatcher sends it with the same id and body, signed afresh. */
export async function redeliver(deps: AppDeps, caller: Caller, id: string): Promise<ApiWebhookDelivery> {
  const delivery = await deps.store.redeliverWebhook({
    organizationId: caller.organization.id,
    environment: caller.apiKey.environment,
    id,
    now: deps.clock.now(),
  });
  if (!delivery) throw new DeliveryNotFoundError(id);
  deps.logger.info({ webhookId: id, runId: delivery.runId }, "webhook redelivery queued");
  return toApiDelivery(delivery);
}

export function toApiDelivery(delivery: WebhookDeliveryLog): ApiWebhookDelivery {
  return {
    id: delivery.id,
    run_id: delivery.runId,
    environment: delivery.environment,
    url: delivery.url,
    event_type: delivery.eventType,
    state: delivery.state,
    created_at: delivery.createdAt.toISOString(),
    next_attempt_at: delivery.state === "pending" ? delivery.nextAttemptAt.toISOString() : null,
    attempts: delivery.history.map((attempt) => ({
      attempted_at: attempt.at.toISOString(),
      status: attempt.status,
      error: attempt.error,
      duration_ms: attempt.durationMs,
    })),
  };
}
