import { countRequest as countIntoWindow, RATE_WINDOW_MS, type RateDecision } from "@refvid/core";
import type { Database } from "../database.js";

export interface CountedRequest {
  apiKeyId: string;
  limit: number;
}

/**
 * Counts requests into their keys' rate windows in one statement, atomic across processes: per key
 * it starts a new window or adds the key's requests to the current one, and each request learns its
 * place in the window, in the order given. Keys are written in sorted order, so two processes
 * counting the same keys never wait on each other in a cycle. `rate_windows` is unlogged (migration
 * 000010): counting commits without waiting for the disk.
 */
export async function countRequests(
  db: Database,
  requests: readonly CountedRequest[],
  now: Date,
): Promise<RateDecision[]> {
  const { rows } = await db.query<{ api_key_id: string; window_start: Date; count: number }>(
    `insert into rate_windows (api_key_id, window_start, count)
     select key, $2, count(*)::int from unnest($1::text[]) as key group by key order by key
     on conflict (api_key_id) do update set
       window_start = case when rate_windows.window_start <= $2::timestamptz - $3 * interval '1 millisecond' then $2 else rate_windows.window_start end,
       count = case when rate_windows.window_start <= $2::timestamptz - $3 * interval '1 millisecond' then excluded.count else rate_windows.count + excluded.count end
     returning api_key_id, window_start, count`,
    [requests.map((r) => r.apiKeyId), now, RATE_WINDOW_MS],
    "refvid_count_requests",
  );
  const windows = new Map(rows.map((row) => [row.api_key_id, row]));
  const seen = new Map<string, number>();
  const requested = new Map<string, number>();
  for (const { apiKeyId } of requests) requested.set(apiKeyId, (requested.get(apiKeyId) ?? 0) + 1);
  return requests.map(({ apiKeyId, limit }) => {
    const row = windows.get(apiKeyId);
    if (!row) throw new Error(`rate window of ${apiKeyId} was not counted`);
    // This request's place among the key's requests of this statement, counted from the window's end.
    const place = (seen.get(apiKeyId) ?? 0) + 1;
    seen.set(apiKeyId, place);
    const before = Number(row.count) - (requested.get(apiKeyId) ?? 0) + place - 1;
    const previous =
      before === 0 ? undefined : { windowStart: new Date(row.window_start).getTime(), count: before };
    return countIntoWindow(previous, limit, now.getTime());
  });
}
