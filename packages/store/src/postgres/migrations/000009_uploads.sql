-- Reference uploads (POST /v1/files): who owns each and until when. The bytes are in the blob
-- store under the upload's id; only keys of the same organization and environment may use it.
create table uploads (
  id text primary key,
  organization_id text not null references organizations (id),
  api_key_id text not null references api_keys (id),
  environment text not null check (environment in ('live', 'test')),
  content_type text not null,
  bytes bigint not null check (bytes >= 0),
  file_name text,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
-- The retention sweep forgets expired uploads in expiry order.
create index uploads_by_expiry on uploads (expires_at);
