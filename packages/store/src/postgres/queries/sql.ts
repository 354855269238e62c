/** What the queries share: JSON parameters, the notification channel, and core's sets as SQL. */
import { IN_FLIGHT_STATUSES } from "@refvid/core";
import type * as T from "../../types.js";
import type { Queryable } from "../database.js";

export const json = (value: unknown) => JSON.stringify(value);

export const CHANNEL = "refvid_runs";

/** Core's in-flight statuses as SQL literals, the same text as the `runs_in_flight` index predicate. */
export const IN_FLIGHT_SQL = IN_FLIGHT_STATUSES.map((status) => `'${status}'`).join(", ");

/**
 * A run event as NOTIFY carries it: with the `origin` of the store that made the change, which has
 * already told its own listeners and so ignores the echo.
 */
export const eventPayload = (origin: string, event: T.StoreEvent) => json({ ...event, origin });

/** NOTIFY is transactional: listeners hear it only if the transaction commits. */
export const notify = (tx: Queryable, origin: string, event: T.StoreEvent) =>
  tx.query("select pg_notify($1, $2)", [CHANNEL, eventPayload(origin, event)]);

/** A delivery's attempts, oldest first, as one JSON column `history` (for `toDeliveryLog`); `d` is the delivery. */
export const DELIVERY_HISTORY = `coalesce((select jsonb_agg(jsonb_build_object('at', a.attempted_at, 'status', a.status,
  'error', a.error, 'duration_ms', a.duration_ms) order by a.number) from webhook_attempts a where a.delivery_id = d.id),
  '[]'::jsonb) as history`;

/**
 * Every column of `runs` that `toRun` reads, by name: a statement prepared once per connection
 * names its result's columns, so a migration that adds one cannot change a prepared result.
 */
export const RUN_COLUMNS = `id, organization_id, api_key_id, environment, endpoint, input, status, webhook_url,
  webhook_events, metadata, reserved, unit_price, reserved_seconds, charged, billable_seconds, output, error, progress,
  created_at, started_at, completed_at, lease_owner, lease_expires_at, attempts, upstream, provider, route, vendor_cost,
  price_unit, queue_position, priority, video, video_deleted_at`;

/** The next ledger entry's id, `led_` and its sequence number zero-padded (`sequenceId`). */
export const NEXT_LEDGER_ID = "'led_' || lpad(nextval('ledger_entry_seq')::text, 19, '0')";

/** The next audit entry's id, `aud_` and its sequence number zero-padded. */
export const NEXT_AUDIT_ID = "'aud_' || lpad(nextval('audit_entry_seq')::text, 19, '0')";
