-- The vendor job serving a run (provider, the vendor's id, the URLs to follow), kept before a
-- worker waits on it, so a worker that takes an expired lease over resumes that job.
alter table runs add column upstream jsonb;
