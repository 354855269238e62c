-- The provider whose slot a processing run takes, so a provider's max_concurrency holds across
-- every worker process on the database; counted through a partial index of processing runs.
alter table runs add column provider text;
create index runs_processing_by_provider on runs (provider) where status = 'processing';
