-- The lifetime top-up cap (5 billion USD, core's MAX_LIFETIME_TOP_UPS) as a constraint, so no race
-- past the check can make a lifetime total, and with it any balance, leave JavaScript's exact
-- integer range. NOT VALID: existing rows are not re-checked, so the migration never fails on them.
alter table organizations add constraint organizations_lifetime_top_ups_cap
  check (lifetime_top_ups <= 5000000000000000) not valid;
