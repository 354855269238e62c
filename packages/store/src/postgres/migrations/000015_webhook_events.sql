-- A run's webhook may get its start and its progress besides its end (docs/decisions.md,
-- "Webhooks"): the events it asked for, and several deliveries per run, sent in order.
alter table runs add column webhook_events jsonb not null default '["completed"]';

-- A run's deliveries in the order they were queued (every run's, in fact: one sequence).
create sequence webhook_deliveries_seq;
alter table webhook_deliveries add column seq bigint not null default nextval('webhook_deliveries_seq');
alter sequence webhook_deliveries_seq owned by webhook_deliveries.seq;
alter table webhook_deliveries drop constraint webhook_deliveries_run_id_key;
create unique index webhook_deliveries_by_run on webhook_deliveries (run_id, seq);

-- The first attempt: when it was claimed, then when it ended (null: never attempted). A run's next
-- progress event goes out a second or more after it.
alter table webhook_deliveries add column first_attempt_at timestamptz;
update webhook_deliveries d set first_attempt_at = coalesce(
  (select a.attempted_at + a.duration_ms * interval '1 millisecond' from webhook_attempts a
   where a.delivery_id = d.id and a.number = 1), d.created_at)
  where d.attempts > 0;

-- A started or progress event's run as it stood then (null for a terminal event).
alter table webhook_deliveries add column state_at timestamptz;
alter table webhook_deliveries add column state_progress real;
alter table webhook_deliveries add column state_queue_position integer;

-- At most one progress event per run waits to be sent: later changes are merged into it.
create unique index webhook_deliveries_unsent_progress on webhook_deliveries (run_id)
  where event_type = 'run.progress' and first_attempt_at is null;
