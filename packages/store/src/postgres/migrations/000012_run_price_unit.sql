-- How a run's unit_price counts, fixed at admission: per second of output, or once for the whole
-- run (a catalog model priced per run). Every run admitted before was priced per second.
alter table runs add column price_unit text not null default 'second' check (price_unit in ('second', 'run'));
