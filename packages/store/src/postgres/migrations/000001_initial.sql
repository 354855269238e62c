-- refvid schema, version 1. Money is bigint micro-USD; CHECK constraints make a negative
-- available balance, reservation or in-flight count impossible even if the code were wrong.

create table organizations (
  id text primary key,
  name text not null,
  created_at timestamptz not null,
  balance bigint not null default 0,
  reserved bigint not null default 0 check (reserved >= 0),
  total_spent bigint not null default 0 check (total_spent >= 0),
  lifetime_top_ups bigint not null default 0 check (lifetime_top_ups >= 0),
  tier text not null check (tier in ('starter', 'growth', 'pro', 'scale')),
  concurrency_limit integer not null check (concurrency_limit > 0),
  in_flight integer not null default 0 check (in_flight >= 0),
  webhook_secret text not null,
  constraint available_not_negative check (balance - reserved >= 0)
);

create table api_keys (
  id text primary key,
  organization_id text not null references organizations (id),
  name text,
  environment text not null check (environment in ('live', 'test')),
  key_hash text not null unique,
  key_prefix text not null,
  max_concurrency integer not null check (max_concurrency > 0),
  rate_limit_per_minute integer not null check (rate_limit_per_minute > 0),
  in_flight integer not null default 0 check (in_flight >= 0),
  created_at timestamptz not null,
  revoked_at timestamptz
);

create table top_ups (
  id text primary key,
  organization_id text not null references organizations (id),
  amount bigint not null check (amount > 0),
  note text,
  created_at timestamptz not null
);

create table runs (
  id text primary key,
  organization_id text not null references organizations (id),
  api_key_id text not null references api_keys (id),
  endpoint text not null,
  input jsonb not null,
  status text not null check (status in ('queued', 'processing', 'succeeded', 'failed', 'timeout', 'cancelled')),
  webhook_url text,
  metadata jsonb not null default '{}',
  reserved bigint not null check (reserved >= 0),
  unit_price bigint not null check (unit_price >= 0),
  reserved_seconds integer not null check (reserved_seconds > 0),
  charged bigint check (charged >= 0 and charged <= reserved),
  billable_seconds integer,
  output jsonb,
  error jsonb,
  progress real,
  created_at timestamptz not null,
  started_at timestamptz,
  completed_at timestamptz,
  lease_owner text,
  lease_expires_at timestamptz,
  attempts integer not null default 0,
  -- a terminal run has its charge; a run in flight has none
  constraint charged_when_terminal check ((status in ('queued', 'processing')) = (charged is null))
);

-- Poll is by primary key. Search: keyset on (organization, created_at, id), newest first.
create index runs_search on runs (organization_id, created_at desc, id desc);
-- The queue and the sweeper only ever look at runs in flight.
create index runs_queued on runs (created_at, id) where status = 'queued';
create index runs_in_flight on runs (created_at) where status in ('queued', 'processing');

create table rate_windows (
  api_key_id text primary key references api_keys (id),
  window_start timestamptz not null,
  count integer not null
);

create table idempotency_keys (
  organization_id text not null references organizations (id),
  key text not null,
  request_hash text not null,
  run_id text not null references runs (id),
  expires_at timestamptz not null,
  response_status integer,
  response_body jsonb,
  primary key (organization_id, key)
);

create table webhook_deliveries (
  id text primary key,
  run_id text not null unique references runs (id),
  organization_id text not null references organizations (id),
  url text not null,
  event_type text not null,
  payload text,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  state text not null check (state in ('pending', 'delivered', 'failed')),
  last_error text,
  delivered_at timestamptz
);

create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending';
