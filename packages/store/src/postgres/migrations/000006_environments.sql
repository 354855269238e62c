-- Live and test are separate worlds (docs/decisions.md, "Test keys"): a run keeps the environment
-- of the key that made it, searches stay within one environment, and test runs hold nothing on the
-- wallet and are counted in flight apart from live runs.
alter table runs add column environment text not null default 'live' check (environment in ('live', 'test'));
update runs set environment = 'test' from api_keys k where k.id = runs.api_key_id and k.environment = 'test';
alter table runs alter column environment drop default;
alter table organizations add column test_in_flight integer not null default 0 check (test_in_flight >= 0);
-- Test runs already in flight leave the live count and the wallet's reservation.
update organizations o set in_flight = o.in_flight - t.runs, test_in_flight = t.runs, reserved = o.reserved - t.held
  from (select organization_id, count(*)::integer as runs, sum(reserved)::bigint as held from runs
        where environment = 'test' and status in ('queued', 'processing') group by organization_id) t
  where t.organization_id = o.id;
-- Idempotency keys are scoped to the organization and the environment: the stored key is
-- `<environment>:<key>`. The primary key is dropped while rewriting so no row collides midway.
alter table idempotency_keys drop constraint idempotency_keys_pkey;
update idempotency_keys i set key = r.environment || ':' || i.key from runs r where r.id = i.run_id;
alter table idempotency_keys add primary key (organization_id, key);
-- Searches keep their newest-first keyset order within one organization and environment.
drop index runs_search;
drop index runs_search_endpoint;
drop index runs_search_status;
create index runs_search on runs (organization_id, environment, created_at desc, id desc);
create index runs_search_endpoint on runs (organization_id, environment, endpoint, created_at desc, id desc);
create index runs_search_status on runs (organization_id, environment, status, created_at desc, id desc);
