import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";

/** Marks the organization's video deleted, once: a second delete keeps the first's time. */
export async function deleteVideo(
  db: Database,
  organizationId: string,
  runId: string,
  now: Date,
): ReturnType<T.Store["deleteVideo"]> {
  const { rows } = await db.query(
    `update runs set video_deleted_at = coalesce(video_deleted_at, $3)
     where id = $2 and organization_id = $1 and video is not null returning *`,
    [organizationId, runId, now],
  );
  return rows[0] ? toRun(rows[0]) : null;
}
