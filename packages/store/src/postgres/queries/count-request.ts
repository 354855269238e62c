import { countRequest as countIntoWindow, RATE_WINDOW_MS } from "@refvid/core";
import type * as T from "../../types.js";
import type { Database } from "../database.js";

export async function countRequest(
  db: Database,
  apiKeyId: string,
  limit: number,
  now: Date,
): ReturnType<T.Store["countRequest"]> {
  // One statement, atomic across processes: start a new window or count into the current one.
  const { rows } = await db.query<{ window_start: Date; count: number }>(
    `insert into rate_windows (api_key_id, window_start, count) values ($1, $2, 1)
     on conflict (api_key_id) do update set
       window_start = case when rate_windows.window_start <= $2::timestamptz - $3 * interval '1 millisecond' then $2 else rate_windows.window_start end,
       count = case when rate_windows.window_start <= $2::timestamptz - $3 * interval '1 millisecond' then 1 else rate_windows.count + 1 end
     returning window_start, count`,
    [apiKeyId, now, RATE_WINDOW_MS],
  );
  const row = rows[0] as { window_start: Date; count: number };
  const previous = { windowStart: new Date(row.window_start).getTime(), count: Number(row.count) - 1 };
  return countIntoWindow(previous.count === 0 ? undefined : previous, limit, now.getTime());
}
