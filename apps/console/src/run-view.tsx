/** One run as it stands: status, progress, video, timeline, billing and error. */
import type { Run } from "@refvid/client";
import type { ReactNode } from "react";

const time = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "—");
const clock = (iso: string) => new Date(iso).toLocaleTimeString();

/**
 * Where the run stands in a queue: refvid's while it is queued (with when it should start and
 * end), its vendor's while processing, when the vendor says.
 */
function QueuePlace({ run }: { run: Run }) {
  if (typeof run.queue_position !== "number") return null;
  if (run.status === "processing") {
    return <p data-testid="queue-place">{run.queue_position} ahead in the vendor's queue</p>;
  }
  const ahead = run.queue_position === 0 ? "Next to start" : `${run.queue_position} ahead in the queue`;
  const start = run.estimated_start_at;
  const end = run.estimated_end_at;
  return (
    <p data-testid="queue-place">
      {ahead}
      {start && end
        ? ` · starts around ${clock(start.p50)} (by ${clock(start.p90)}), done around ${clock(end.p50)} (by ${clock(end.p90)})`
        : ""}
    </p>
  );
}

/** `link`, if given, shows under the status: the way to the run's own page. */
export function RunView({ run, link }: { run: Run; link?: ReactNode }) {
  const video = run.output?.videos[0];
  return (
    <section className="run" aria-label={`Run ${run.run_id}`}>
      <p>
        <span className={`status status-${run.status}`} data-testid="run-status">
          {run.status}
        </span>{" "}
        <code>{run.run_id}</code>
      </p>
      {link ? <p>{link}</p> : null}
      <QueuePlace run={run} />
      {run.status === "processing" || run.status === "queued" ? (
        <label className="progress">
          Progress
          <progress max={1} value={run.progress ?? undefined}>
            {run.progress === null ? "working" : `${Math.round(run.progress * 100)} %`}
          </progress>
        </label>
      ) : null}
      {video ? (
        <>
          {/* biome-ignore lint/a11y/useMediaCaption: generated videos come without captions */}
          <video
            controls
            playsInline
            preload="auto"
            src={video.url}
            poster={video.thumbnail_url}
            data-testid="run-video"
          />
          <p>
            <a href={video.url} download={video.file_name ?? `${run.run_id}.mp4`}>
              Download the MP4
            </a>
          </p>
        </>
      ) : null}
      <dl className="timeline">
        <dt>Model</dt>
        <dd>{run.endpoint}</dd>
        <dt>Created</dt>
        <dd>{time(run.created_at)}</dd>
        <dt>Started</dt>
        <dd>{time(run.started_at)}</dd>
        <dt>Completed</dt>
        <dd>{time(run.completed_at)}</dd>
        <dt>Elapsed</dt>
        <dd>{run.elapsed_ms === null ? "—" : `${(run.elapsed_ms / 1000).toFixed(1)} s`}</dd>
        <dt>Billing</dt>
        <dd>
          {run.billing
            ? `$${run.billing.amount}${
                run.billing.unit === "run"
                  ? " (a run)"
                  : run.billing.billable_seconds
                    ? ` (${run.billing.billable_seconds} s at $${run.billing.unit_price}/s)`
                    : ""
              }`
            : "— (in flight)"}
          {run.environment === "test" ? " — a test run: priced, not charged" : ""}
        </dd>
        {run.error ? (
          <>
            <dt>Error</dt>
            <dd className="error">
              {run.error.type}: {run.error.message}
            </dd>
          </>
        ) : null}
        {Object.keys(run.metadata ?? {}).length > 0 ? (
          <>
            <dt>Metadata</dt>
            <dd>
              <code>{JSON.stringify(run.metadata)}</code>
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}
