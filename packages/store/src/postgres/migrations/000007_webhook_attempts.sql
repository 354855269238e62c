-- The webhook delivery log (docs/decisions.md, "Webhook delivery log"). Each attempt is a row of
-- webhook_attempts, appended in the statement that counts it: attempts are never rewritten, and a
-- delivery redelivered many times does not grow a row that every retry would rewrite.
create table webhook_attempts (
  delivery_id text not null references webhook_deliveries (id),
  number integer not null check (number > 0),
  attempted_at timestamptz not null,
  status integer,
  error text,
  duration_ms integer not null check (duration_ms >= 0),
  primary key (delivery_id, number)
);
-- A delivery belongs to its run's environment and is listed newest first by when it was queued
-- (the run's end); both are kept on the delivery so the log pages through an index alone.
alter table webhook_deliveries add column environment text check (environment in ('live', 'test'));
alter table webhook_deliveries add column created_at timestamptz;
update webhook_deliveries d set environment = r.environment, created_at = coalesce(r.completed_at, r.created_at)
  from runs r where r.id = d.run_id;
alter table webhook_deliveries alter column environment set not null;
alter table webhook_deliveries alter column created_at set not null;
-- The pending attempt is a redelivery asked for through the API: made once, never retried.
alter table webhook_deliveries add column redelivery boolean not null default false;
create index webhook_deliveries_log on webhook_deliveries (organization_id, environment, created_at desc, id desc);
create index webhook_deliveries_log_state on webhook_deliveries (organization_id, environment, state, created_at desc, id desc);
-- Secret rotation: the replaced secret keeps signing alongside the new one until it expires.
alter table organizations add column previous_webhook_secret text;
alter table organizations add column previous_webhook_secret_expires_at timestamptz;
alter table organizations add constraint organizations_previous_webhook_secret_expiry
  check ((previous_webhook_secret is null) = (previous_webhook_secret_expires_at is null));
