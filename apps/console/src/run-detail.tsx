/**
 * One run's page (`#/runs/<run_id>`): the run as it stands, followed live until it ends, with
 * Cancel while it is in flight. Opening it, by a link, a reload or a click in the list, brings it
 * into view and moves the focus to its heading.
 */
import { isTerminal, type RefvidClient, type Run } from "@refvid/client";
import { useEffect, useRef, useState } from "react";
import { ErrorMessage } from "./errors.js";
import { RunView } from "./run-view.js";

export function RunDetail(props: { client: RefvidClient; runId: string; onRun: (run: Run) => void }) {
  const { client, runId, onRun } = props;
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>();
  const heading = useRef<HTMLHeadingElement>(null);
  const report = useRef(onRun);
  report.current = onRun;

  useEffect(() => {
    setRun(null);
    setError(undefined);
    heading.current?.scrollIntoView({ block: "start" });
    heading.current?.focus({ preventScroll: true });
    const controller = new AbortController();
    (async () => {
      try {
        // The stream yields the run as it stands first, so an ended run shows at once too.
        for await (const update of client.streamRun(runId, { signal: controller.signal })) {
          setRun(update);
          report.current(update);
        }
      } catch (e) {
        if (!controller.signal.aborted) setError(e);
      }
    })();
    return () => controller.abort();
  }, [client, runId]);

  const cancel = async (current: Run) => {
    setError(undefined);
    try {
      const cancelled = await client.cancelRun(current.run_id);
      setRun(cancelled);
      report.current(cancelled);
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section aria-labelledby="run-detail-heading" className="detail">
      <h2 id="run-detail-heading" ref={heading} tabIndex={-1}>
        Run detail
      </h2>
      <p>
        <a href="#/runs">Back to the list</a>
      </p>
      <ErrorMessage error={error} />
      {run ? (
        <>
          <RunView run={run} />
          {isTerminal(run) ? null : (
            <button type="button" onClick={() => cancel(run)}>
              Cancel run
            </button>
          )}
        </>
      ) : error ? null : (
        <p aria-busy="true">
          Loading <code>{runId}</code>…
        </p>
      )}
    </section>
  );
}
