-- Spend alerts (docs/decisions.md, "Budgets and the ledger"): an organization's alert webhook URL
-- and wallet thresholds, the wallet's and each key's alert state, and deliveries that belong to no
-- run (an alert's body is fixed when it is raised).
alter table organizations add column alert_webhook_url text;
-- null: the default thresholds (20 % and 5 % of the last top-up).
alter table organizations add column balance_alert_thresholds jsonb;
alter table organizations add column last_top_up bigint not null default 0 check (last_top_up >= 0);
-- The threshold amounts fired and not armed again.
alter table organizations add column balance_alerts_fired jsonb not null default '[]';
update organizations o set last_top_up = coalesce(
  (select amount from top_ups t where t.organization_id = o.id order by created_at desc, id desc limit 1), 0);

alter table api_keys add column budget_alert_level smallint not null default 0
  check (budget_alert_level in (0, 80, 100));
alter table api_keys add column budget_alert_period_start timestamptz;

alter table webhook_deliveries alter column run_id drop not null;
