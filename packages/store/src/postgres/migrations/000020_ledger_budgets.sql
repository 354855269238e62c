-- The ledger, operators' corrections, the audit log and per-key budgets (docs/decisions.md,
-- "Budgets and the ledger").

-- Every change of a wallet, written in the transaction that makes it. `amount` is signed: its
-- effect on the balance (top_up, reversal, adjustment, charge) or on the reservation (reservation,
-- release); `balance` and `reserved` are the wallet right after it.
create sequence ledger_entry_seq;
create table ledger_entries (
  id text primary key,
  organization_id text not null,
  kind text not null check (kind in ('top_up', 'reversal', 'adjustment', 'charge', 'reservation', 'release')),
  amount bigint not null,
  balance bigint not null,
  reserved bigint not null,
  run_id text,
  api_key_id text,
  top_up_id text,
  reason text,
  actor text,
  created_at timestamptz not null
);
-- Listed newest first by id: ids are taken under the organization's lock, in the order the wallet
-- moved, while `created_at` is each request's own time, read before it waited for that lock.
create index ledger_by_organization on ledger_entries (organization_id, id desc);
create index ledger_by_key on ledger_entries (api_key_id, id desc) where api_key_id is not null;
create index ledger_by_run on ledger_entries (run_id) where run_id is not null;

-- Entries are never changed or taken away.
create function ledger_entries_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'ledger entries are never updated or deleted' using errcode = 'restrict_violation';
end
$$;
create trigger ledger_entries_append_only before update or delete on ledger_entries
  for each statement execute function ledger_entries_append_only();

-- Wallets that existed before the ledger open it: one adjustment for the balance, one reservation
-- per live run in flight.
insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, reason, actor, created_at)
select 'led_' || lpad(nextval('ledger_entry_seq')::text, 19, '0'), id, 'adjustment', balance, balance, 0,
  'Opening balance: the wallet as the ledger began', 'migration', now()
from organizations where balance <> 0;
insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, run_id, api_key_id, created_at)
select 'led_' || lpad(nextval('ledger_entry_seq')::text, 19, '0'), r.organization_id, 'reservation', r.reserved,
  o.balance, sum(r.reserved) over (partition by r.organization_id order by r.created_at, r.id),
  r.id, r.api_key_id, now()
from runs r join organizations o on o.id = r.organization_id
where r.status in ('queued', 'processing') and r.environment = 'live' and r.reserved > 0
-- Ids in the order of the running sums.
order by r.organization_id, r.created_at, r.id;

-- Top-ups: the admin token that made one, its Idempotency-Key, and whether it was taken back.
alter table top_ups add column actor text;
alter table top_ups add column idempotency_key text;
alter table top_ups add column reversed_at timestamptz;
create unique index top_ups_idempotency on top_ups (organization_id, idempotency_key) where idempotency_key is not null;

-- Who did what through the admin API.
create sequence audit_entry_seq;
create table audit_log (
  id text primary key,
  actor text not null,
  action text not null,
  organization_id text,
  target_id text,
  detail jsonb not null,
  request_id text not null,
  created_at timestamptz not null
);
create index audit_all on audit_log (created_at desc, id desc);
create index audit_by_organization on audit_log (organization_id, created_at desc, id desc) where organization_id is not null;

-- Budgets: an amount per period, and what each key spent in its current day, week and month
-- (kept whether or not it has a budget) and holds for its runs in flight.
alter table api_keys add column budget bigint check (budget >= 0);
alter table api_keys add column budget_period text check (budget_period in ('day', 'week', 'month'));
alter table api_keys add constraint api_keys_budget_whole check ((budget is null) = (budget_period is null));
alter table api_keys add column spent_day bigint not null default 0;
alter table api_keys add column spent_day_start timestamptz;
alter table api_keys add column spent_week bigint not null default 0;
alter table api_keys add column spent_week_start timestamptz;
alter table api_keys add column spent_month bigint not null default 0;
alter table api_keys add column spent_month_start timestamptz;
alter table api_keys add column budget_reserved bigint not null default 0 check (budget_reserved >= 0);
update api_keys k set budget_reserved = coalesce(
  (select sum(reserved) from runs r where r.api_key_id = k.id and r.status in ('queued', 'processing')), 0);
-- What keys spent so far in the current UTC day, ISO week and month, from their runs' charges.
update api_keys k set
  spent_day_start = p.day, spent_week_start = p.week, spent_month_start = p.month,
  spent_day = coalesce((select sum(charged) from runs r where r.api_key_id = k.id and r.completed_at >= p.day), 0),
  spent_week = coalesce((select sum(charged) from runs r where r.api_key_id = k.id and r.completed_at >= p.week), 0),
  spent_month = coalesce((select sum(charged) from runs r where r.api_key_id = k.id and r.completed_at >= p.month), 0)
from (select date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' as day,
        date_trunc('week', now() at time zone 'UTC') at time zone 'UTC' as week,
        date_trunc('month', now() at time zone 'UTC') at time zone 'UTC' as month) p;
