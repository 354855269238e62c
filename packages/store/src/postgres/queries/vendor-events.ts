import type { VendorEvent, VendorLogStore } from "../../vendor-types.js";
import type { Database } from "../database.js";
import { CHANNEL, eventPayload } from "./sql.js";

/** Adds an entry; a hook's NOTIFY goes out in the same statement. */
export async function addVendorEvent(db: Database, origin: string, event: VendorEvent): Promise<void> {
  const params = [
    event.runId,
    event.provider,
    event.upstreamId,
    event.kind,
    event.detail,
    event.at,
    event.payload ?? null,
  ];
  if (event.kind !== "hook") {
    await db.query(
      `insert into vendor_events (run_id, provider, upstream_id, kind, detail, at, payload)
       values ($1, $2, $3, $4, $5, $6, $7)`,
      params,
    );
    return;
  }
  await db.query(
    `with added as (insert into vendor_events (run_id, provider, upstream_id, kind, detail, at, payload)
       values ($1, $2, $3, $4, $5, $6, $7) returning run_id)
     select pg_notify($8, $9) from added`,
    [...params, CHANNEL, eventPayload(origin, { kind: "vendor", runId: event.runId })],
  );
}

export async function listVendorEvents(db: Database, runId: string): Promise<VendorEvent[]> {
  const { rows } = await db.query<{
    run_id: string;
    provider: string;
    upstream_id: string | null;
    kind: VendorEvent["kind"];
    detail: string | null;
    at: Date;
  }>(
    "select run_id, provider, upstream_id, kind, detail, at from vendor_events where run_id = $1 order by id",
    [runId],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    provider: row.provider,
    upstreamId: row.upstream_id,
    kind: row.kind,
    detail: row.detail,
    at: new Date(row.at),
  }));
}

/** The payload of the run's latest hook about the job with that status word (see `VendorLogStore`). */
export async function vendorHookPayload(
  db: Database,
  { runId, provider, upstreamId, status }: Parameters<VendorLogStore["vendorHookPayload"]>[0],
): Promise<string | null> {
  const { rows } = await db.query<{ payload: string | null }>(
    `select payload from vendor_events
     where run_id = $1 and kind = 'hook' and provider = $2 and upstream_id = $3 and detail = $4
     order by id desc limit 1`,
    [runId, provider, upstreamId, status],
  );
  return rows[0]?.payload ?? null;
}

export async function findRunByUpstream(
  db: Database,
  { provider, upstreamId }: Parameters<VendorLogStore["findRunByUpstream"]>[0],
): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `select id from runs where upstream is not null and upstream ->> 'provider' = $1 and upstream ->> 'id' = $2
     limit 1`,
    [provider, upstreamId],
  );
  return rows[0]?.id ?? null;
}
