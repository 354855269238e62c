-- Upload quotas (docs/decisions.md, "Reference uploads"): an organization's own limits on the bytes
-- and the number of uploads it keeps at once; null is the operator's default
-- (REFVID_UPLOAD_QUOTA_BYTES, REFVID_UPLOAD_QUOTA_COUNT).
alter table organizations add column upload_quota_bytes bigint check (upload_quota_bytes >= 0);
alter table organizations add column upload_quota_count integer check (upload_quota_count >= 0);

-- What an organization's unexpired uploads take, summed at each upload from the index alone.
create index uploads_by_organization on uploads (organization_id, expires_at) include (bytes);
