-- The OpenAI-compatible `/v1/videos` surface (docs/decisions.md, "The videos surface"): a video is
-- a run made there. `video` keeps what the client asked in that surface's terms (the model name
-- as given, seconds, size, the video it remixes); `video_deleted_at` is set by its DELETE, after
-- which the video is gone from that surface while the run stays, billed, in the run API.
alter table runs add column video jsonb;
alter table runs add column video_deleted_at timestamptz;
create index runs_videos on runs (organization_id, environment, created_at, id)
  where video is not null and video_deleted_at is null;
-- Where the organization's `video.completed` and `video.failed` events go (null: not subscribed).
alter table organizations add column video_webhook_url text;
