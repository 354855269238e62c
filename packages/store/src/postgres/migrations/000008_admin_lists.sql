-- The admin API's lists, run search and usage (docs/decisions.md, "Admin lists and usage"). Each
-- list is newest first by (created_at, id) with keyset paging, so each gets an index in that order.
-- Organizations, across the installation.
create index organizations_list on organizations (created_at desc, id desc);
-- One organization's keys and top-ups (neither table had an index on organization_id).
create index api_keys_list on api_keys (organization_id, created_at desc, id desc);
create index top_ups_list on top_ups (organization_id, created_at desc, id desc);
-- One key's runs, for the api_key_id filter of both searches: a key's runs are one organization's
-- and one environment's, so this reads only them, in order, however busy the organization is.
create index runs_by_api_key on runs (api_key_id, created_at desc, id desc);
-- Runs of every organization: the operators' search without an organization or key, and the
-- usage report without an organization, whose window bounds the scan on created_at.
create index runs_by_created on runs (created_at desc, id desc);
