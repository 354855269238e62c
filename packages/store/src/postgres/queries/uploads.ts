/**
 * Reference uploads: kept within their organization's quota, read and forgotten for their own
 * organization and environment only.
 */
import { decideUpload, quotaInForce, type UploadQuota, type UploadUsage } from "@refvid/core";
import type * as T from "../../types.js";
import type { Database, Queryable } from "../database.js";
import { toUpload, toUploadQuota } from "../rows.js";

/** The bytes and count of an organization's uploads unexpired at `now`, from the index alone. */
async function usageOf(db: Queryable, organizationId: string, now: Date): Promise<UploadUsage> {
  const { rows } = await db.query<{ bytes: string; count: number }>(
    `select coalesce(sum(bytes), 0)::text as bytes, count(*)::integer as count
     from uploads where organization_id = $1 and expires_at > $2`,
    [organizationId, now],
  );
  const row = rows[0] ?? { bytes: "0", count: 0 };
  return { bytes: Number(row.bytes), count: row.count };
}

/**
 * Under the organization's row lock, so uploads racing each other are decided one after another,
 * each seeing those recorded before it. The usage is read by a statement of its own, after the
 * lock is held: in READ COMMITTED a statement sees what was committed before it began, so a sum in
 * the locking statement itself would miss the upload whose transaction it waited for.
 */
export async function createUpload(
  db: Database,
  r: T.UploadRecord,
  defaults: UploadQuota,
): ReturnType<T.Store["createUpload"]> {
  return db.transaction(async (tx) => {
    const locked = await tx.query(
      "select upload_quota_bytes, upload_quota_count from organizations where id = $1 for update",
      [r.organizationId],
    );
    const org = locked.rows[0];
    if (!org) return { kind: "organization_gone" } as const;
    const quota = quotaInForce(toUploadQuota(org), defaults);
    const decision = decideUpload(await usageOf(tx, r.organizationId, r.createdAt), quota, r.bytes);
    if (!decision.ok) return { kind: "over_quota", decision } as const;
    const { rows } = await tx.query(
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
    return { kind: "created", upload: toUpload(rows[0] as Record<string, unknown>) } as const;
  });
}

/** One round trip: the organization's own quota and what its unexpired uploads take. */
export async function uploadUsage(
  db: Database,
  { organizationId, defaults, now }: Parameters<T.Store["uploadUsage"]>[0],
): ReturnType<T.Store["uploadUsage"]> {
  const { rows } = await db.query<Record<string, unknown> & { bytes: string; count: number }>(
    `select o.upload_quota_bytes, o.upload_quota_count, u.bytes, u.count from organizations o,
       lateral (select coalesce(sum(bytes), 0)::text as bytes, count(*)::integer as count
                from uploads where organization_id = o.id and expires_at > $2) u
     where o.id = $1`,
    [organizationId, now],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    usage: { bytes: Number(row.bytes), count: row.count },
    quota: quotaInForce(toUploadQuota(row), defaults),
  };
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
