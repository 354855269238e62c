/** What the queries share: JSON parameters, the notification channel, and core's sets as SQL. */
import { IN_FLIGHT_STATUSES } from "@refvid/core";
import type * as T from "../../types.js";
import type { Queryable } from "../database.js";

export const json = (value: unknown) => JSON.stringify(value);

export const CHANNEL = "refvid_runs";

/** Core's in-flight statuses as SQL literals, the same text as the `runs_in_flight` index predicate. */
export const IN_FLIGHT_SQL = IN_FLIGHT_STATUSES.map((status) => `'${status}'`).join(", ");

/** NOTIFY is transactional: listeners hear it only if the transaction commits. */
export const notify = (tx: Queryable, event: T.StoreEvent) =>
  tx.query("select pg_notify($1, $2)", [CHANNEL, json(event)]);
