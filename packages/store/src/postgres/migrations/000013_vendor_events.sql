-- A run's vendor log: verified vendor webhooks, create calls whose answer was lost and how each
-- was resolved, orphan jobs. Rows are only ever inserted.
create table vendor_events (
  id bigint generated always as identity primary key,
  run_id text not null references runs (id),
  provider text not null,
  upstream_id text,
  kind text not null check (kind in ('hook', 'create_unanswered', 'adopted', 'created_again', 'orphan', 'cancelled', 'uncertain')),
  detail text,
  at timestamptz not null
);
create index vendor_events_run on vendor_events (run_id, id);

-- Which run recorded a vendor job (adoption must not take another run's job).
create index runs_upstream_job on runs ((upstream ->> 'provider'), (upstream ->> 'id')) where upstream is not null;
