/**
 * The webhook delivery log: the deliveries of the caller's organization and environment, newest
 * first with keyset cursors, one by id, and redelivery. A delivery belongs to its run's
 * environment: like a run, one of another organization or of the other environment is a 404.
 */
import { createHash } from "node:crypto";
import type { components } from "@refvid/api-types";
import { InvalidRequestError, RefvidError } from "@refvid/core";
import type { WebhookDelivery, WebhookDeliveryLog } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import type { Caller } from "./request-context.js";

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

interface Cursor {
  t: string;
  i: string;
  /** Hash of the filters the cursor was made with; a cursor only continues the same listing. */
  f: string;
}

export async function listDeliveries(
  deps: AppDeps,
  caller: Caller,
  query: DeliveryQuery,
): Promise<ApiWebhookDeliveryPage> {
  const { cursor, limit = 20, runId, state } = query;
  const filterHash = createHash("sha256")
    .update(JSON.stringify({ runId, state }))
    .digest("base64url")
    .slice(0, 16);
  let after: { createdAt: Date; id: string } | undefined;
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursor);
    if (!decoded || decoded.f !== filterHash) {
      throw new InvalidRequestError([
        {
          field: "query.cursor",
          message: "is not a next_cursor of this listing; send the same filters with it",
          rule: "cursor",
        },
      ]);
    }
    after = { createdAt: new Date(decoded.t), id: decoded.i };
  }
  const found = await deps.store.searchWebhookDeliveries({
    organizationId: caller.organization.id,
    environment: caller.apiKey.environment,
    limit: limit + 1,
    ...(runId !== undefined ? { runId } : {}),
    ...(state ? { state } : {}),
    ...(after ? { after } : {}),
  });
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = found.length > limit && last !== undefined;
  return {
    data: page.map(toApiDelivery),
    has_more: hasMore,
    next_cursor:
      hasMore && last ? encodeCursor({ t: last.createdAt.toISOString(), i: last.id, f: filterHash }) : null,
  };
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

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString("base64url");

function decodeCursor(text: string): Cursor | null {
  try {
    const value = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Partial<Cursor>;
    if (typeof value.t !== "string" || typeof value.i !== "string" || typeof value.f !== "string")
      return null;
    if (Number.isNaN(Date.parse(value.t))) return null;
    if (value.i.includes("\u0000")) return null; // Postgres text cannot hold NUL
    return value as Cursor;
  } catch {
    return null;
  }
}
