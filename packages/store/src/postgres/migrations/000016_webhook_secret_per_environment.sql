-- Each environment of an organization has its own webhook secret (docs/decisions.md, "Test keys"):
-- a run's webhooks are signed with its environment's, and a key reads and rotates only its own.
-- The columns without a prefix stay the live world's, as in_flight is: every receiver verifying
-- today keeps verifying live deliveries, rotation overlap included. The test world gets a fresh
-- secret, never the live one, which test keys could read until now.
--
-- The default draws a new secret per row (a volatile default is evaluated for each existing row
-- too): 32 bytes from two v4 UUIDs, 244 of their bits from the server's strong random source. The
-- application passes its own; the default fills the rows made before, and any insert that names
-- no test secret.
alter table organizations add column test_webhook_secret text not null
  default 'whsec_' || encode(decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), 'base64');
alter table organizations add constraint organizations_webhook_secrets_differ
  check (test_webhook_secret <> webhook_secret);
alter table organizations add column previous_test_webhook_secret text;
alter table organizations add column previous_test_webhook_secret_expires_at timestamptz;
alter table organizations add constraint organizations_previous_test_webhook_secret_expiry
  check ((previous_test_webhook_secret is null) = (previous_test_webhook_secret_expires_at is null));
