/** Reference uploads: kept, read and forgotten for their own organization and environment only. */
import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toUpload } from "../rows.js";

export async function createUpload(db: Database, r: T.UploadRecord): ReturnType<T.Store["createUpload"]> {
  const { rows } = await db.query(
    `insert into uploads (id, organization_id, api_key_id, environment, content_type, bytes, file_name, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning *`,
    [
      r.id,
      r.organizationId,
      r.apiKeyId,
      r.environment,
      r.contentType,
      r.bytes,
      r.fileName,
      r.createdAt,
      r.expiresAt,
    ],
  );
  return toUpload(rows[0] as Record<string, unknown>);
}

export async function getUpload(
  db: Database,
  input: Parameters<T.Store["getUpload"]>[0],
): ReturnType<T.Store["getUpload"]> {
  const { rows } = await db.query(
    "select * from uploads where id = $1 and organization_id = $2 and environment = $3",
    [input.id, input.organizationId, input.environment],
  );
  return rows[0] ? toUpload(rows[0]) : null;
}

export async function deleteUpload(
  db: Database,
  input: Parameters<T.Store["deleteUpload"]>[0],
): ReturnType<T.Store["deleteUpload"]> {
  const { rows } = await db.query(
    "delete from uploads where id = $1 and organization_id = $2 and environment = $3 returning id",
    [input.id, input.organizationId, input.environment],
  );
  return rows.length > 0;
}

export async function deleteExpiredUploads(
  db: Database,
  now: Date,
): ReturnType<T.Store["deleteExpiredUploads"]> {
  const { rows } = await db.query<{ id: string }>("delete from uploads where expires_at <= $1 returning id", [
    now,
  ]);
  return rows.map((row) => row.id);
}
