-- Search filters that match few runs must not read an organization's whole history: an
-- exact-match metadata filter uses the GIN index, and one endpoint or one status keeps the
-- newest-first keyset order through its own index.
create index runs_metadata on runs using gin (metadata jsonb_path_ops);
create index runs_search_endpoint on runs (organization_id, endpoint, created_at desc, id desc);
create index runs_search_status on runs (organization_id, status, created_at desc, id desc);
