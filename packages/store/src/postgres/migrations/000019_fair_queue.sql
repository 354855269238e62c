-- Fair queues (docs/decisions.md, "Fair queues"): the next run comes from the organization with
-- the fewest runs processing relative to its weight, ties to the one served least recently; within
-- an organization, the key's priority, then first come, first served.
alter table organizations add column queue_weight integer not null default 1
  check (queue_weight between 1 and 1000);
alter table api_keys add column priority text not null default 'normal'
  check (priority in ('low', 'normal', 'high'));
-- The submitting key's priority as a rank (low -1, normal 0, high 1), fixed at admission.
alter table runs add column priority smallint not null default 0;

create index runs_queued_fair on runs (organization_id, priority desc, created_at, id) where status = 'queued';
-- The sliding window of recent durations, per model and route, for estimates.
create index runs_succeeded_recent on runs (endpoint, completed_at desc) where status = 'succeeded';
-- A model's recent arrivals: the rate at which other organizations' runs may come ahead.
create index runs_by_endpoint_created on runs (endpoint, created_at);
-- The runs holding a model's capacity when it has no provider limit.
create index runs_processing_by_endpoint on runs (endpoint) where status = 'processing';

-- Each organization's queued and processing runs per model, kept by the trigger below on every
-- change of a run's status whoever makes it, so that picking the next organization reads one row
-- per organization and model, never the queue itself.
-- No foreign keys here: checking one would lock the organization's row, which admission and the end
-- of a run hold while they change these rows (a deadlock); an organization is never deleted.
create table queue_counts (
  organization_id text not null,
  endpoint text not null,
  queued integer not null default 0 check (queued >= 0),
  processing integer not null default 0 check (processing >= 0),
  primary key (organization_id, endpoint)
);

-- The last turn each organization was served (a claim), and the one before it: a run handed back
-- unstarted (its provider was full) gives its organization its place back. An organization never
-- served has its arrival turn, taken when its first run is queued, less 10^15: it comes before every
-- organization served, and such newcomers come in the order they arrived.
create sequence queue_turn;
create table queue_turns (
  organization_id text primary key,
  turn bigint not null,
  previous_turn bigint
);

create function refvid_count_queue() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' and old.status in ('queued', 'processing') then
    update queue_counts
      set queued = queued - (old.status = 'queued')::int, processing = processing - (old.status = 'processing')::int
      where organization_id = old.organization_id and endpoint = old.endpoint;
  end if;
  if tg_op = 'INSERT' then
    insert into queue_turns (organization_id, turn) values (new.organization_id, nextval('queue_turn') - 1000000000000000)
      on conflict (organization_id) do nothing;
  end if;
  if tg_op <> 'DELETE' and new.status in ('queued', 'processing') then
    insert into queue_counts as c (organization_id, endpoint, queued, processing)
      values (new.organization_id, new.endpoint, (new.status = 'queued')::int, (new.status = 'processing')::int)
      on conflict (organization_id, endpoint) do update
        set queued = c.queued + excluded.queued, processing = c.processing + excluded.processing;
  end if;
  return null;
end $$;

create trigger runs_count_queue_insert after insert on runs
  for each row when (new.status in ('queued', 'processing')) execute function refvid_count_queue();
create trigger runs_count_queue_update after update of status on runs
  for each row when (old.status is distinct from new.status) execute function refvid_count_queue();
create trigger runs_count_queue_delete after delete on runs
  for each row when (old.status in ('queued', 'processing')) execute function refvid_count_queue();

insert into queue_counts (organization_id, endpoint, queued, processing)
  select organization_id, endpoint, count(*) filter (where status = 'queued'), count(*) filter (where status = 'processing')
  from runs where status in ('queued', 'processing') group by organization_id, endpoint;
