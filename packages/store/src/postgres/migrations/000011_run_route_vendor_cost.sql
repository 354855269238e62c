-- The catalog route that served a run and what its vendor charged for it (micro-USD), set when the
-- run ends, so the usage report gives vendor cost and margin by route. Null on runs that ended
-- before, and on runs whose end reported none.
alter table runs add column route text;
alter table runs add column vendor_cost bigint check (vendor_cost >= 0);
