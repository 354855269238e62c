/**
 * Search runs by status, model, creation time and metadata; page through them, each succeeded one
 * with its poster frame; each run links to its own page (`#/runs/<run_id>`), shown above the list.
 */
import type { Model, RefvidClient, Run, RunStatus, SearchRunsRequest } from "@refvid/client";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { ErrorMessage } from "./errors.js";
import { usd } from "./money.js";
import { runHash } from "./route.js";
import { RunDetail } from "./run-detail.js";
import { listItems } from "./schema.js";

const STATUSES: RunStatus[] = ["queued", "processing", "succeeded", "failed", "timeout", "cancelled"];
const PAGE_SIZES = [5, 10, 20, 50, 100];

/** `key=value` lines as metadata; lines without `=` are ignored. */
function metadataOf(text: string): Record<string, string> | undefined {
  const entries = listItems(text)
    .map((line) => line.split("="))
    .filter((parts) => parts.length >= 2)
    .map(([key, ...rest]) => [key?.trim() ?? "", rest.join("=").trim()] as const);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** A run's cost; a test run's is what it was priced at, never taken from the wallet, and says so. */
function Cost({ run }: { run: Run }) {
  const amount = run.billing ? usd(run.billing.amount) : "—";
  if (run.environment !== "test") return amount;
  return (
    <>
      {amount}{" "}
      <span className="tag" title="A test run: priced like a live run, nothing taken from the wallet">
        test, not charged
      </span>
    </>
  );
}

/** A succeeded run's poster frame, small and loaded only when its row scrolls into view. */
function Poster({ run }: { run: Run }) {
  const url = run.output?.videos[0]?.thumbnail_url;
  if (!url) return null;
  return <img className="poster" src={url} alt={`Poster frame of run ${run.run_id}`} loading="lazy" />;
}

export function RunsPage(props: {
  client: RefvidClient;
  models: Model[];
  active: boolean;
  /** The run whose page is open, if any. */
  runId: string | undefined;
}) {
  const { client, models, active, runId } = props;
  const [statuses, setStatuses] = useState<Set<RunStatus>>(new Set());
  const [endpoint, setEndpoint] = useState("");
  const [after, setAfter] = useState("");
  const [before, setBefore] = useState("");
  const [metadata, setMetadata] = useState("");
  const [pageSize, setPageSize] = useState(20);
  const [request, setRequest] = useState<SearchRunsRequest>({});
  /** Cursors of the pages before this one, for "Previous page"; keyset paging has no page numbers. */
  const [cursors, setCursors] = useState<(string | undefined)[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const [runs, setRuns] = useState<Run[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);

  const load = useCallback(
    async (req: SearchRunsRequest, pageCursor: string | undefined) => {
      setLoading(true);
      setError(undefined);
      try {
        const page = await client.searchRuns({ limit: 20, ...req, cursor: pageCursor });
        setRuns(page.data);
        setNext(page.next_cursor);
      } catch (e) {
        setError(e);
      } finally {
        setLoading(false);
      }
    },
    [client],
  );

  // Reloaded whenever the page is shown, so runs started elsewhere appear.
  useEffect(() => {
    if (active) void load(request, cursor);
  }, [load, request, cursor, active]);

  const search = (event: FormEvent) => {
    event.preventDefault();
    setCursors([]);
    setCursor(undefined);
    setRequest({
      status: statuses.size > 0 ? [...statuses] : undefined,
      endpoint: endpoint || undefined,
      created_after: isoOf(after),
      created_before: isoOf(before),
      metadata: metadataOf(metadata),
      limit: pageSize,
    });
  };

  /** The open run as it changes, in its row too. */
  const update = useCallback(
    (run: Run) => setRuns((list) => list.map((r) => (r.run_id === run.run_id ? run : r))),
    [],
  );

  return (
    <div className="runs">
      <h1>Runs</h1>
      {runId ? <RunDetail client={client} runId={runId} onRun={update} /> : null}
      <form onSubmit={search} className="filters" aria-label="Search runs">
        <fieldset>
          <legend>Status</legend>
          {STATUSES.map((status) => (
            <label key={status} className="inline">
              <input
                type="checkbox"
                checked={statuses.has(status)}
                onChange={(e) => {
                  const nextSet = new Set(statuses);
                  if (e.target.checked) nextSet.add(status);
                  else nextSet.delete(status);
                  setStatuses(nextSet);
                }}
              />
              {status}
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="filter-model">Model</label>
          <select id="filter-model" value={endpoint} onChange={(e) => setEndpoint(e.target.value)}>
            <option value="">Any model</option>
            {models.map((m) => (
              <option key={m.slug} value={m.slug}>
                {m.name}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-after">Created from</label>
          <input
            id="filter-after"
            type="datetime-local"
            value={after}
            onChange={(e) => setAfter(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="filter-before">Created before</label>
          <input
            id="filter-before"
            type="datetime-local"
            value={before}
            onChange={(e) => setBefore(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="filter-metadata">Metadata</label>
          <textarea
            id="filter-metadata"
            rows={2}
            value={metadata}
            onChange={(e) => setMetadata(e.target.value)}
            aria-describedby="filter-metadata-help"
          />
          <p className="help" id="filter-metadata-help">
            One key=value per line; runs must carry all of them.
          </p>
        </div>
        <div className="field">
          <label htmlFor="filter-limit">Per page</label>
          <select id="filter-limit" value={pageSize} onChange={(e) => setPageSize(Number(e.target.value))}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <ErrorMessage error={error} />
      <div className="table-wrap">
        <table aria-busy={loading}>
          <caption className="visually-hidden">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Poster</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.run_id} aria-selected={runId === run.run_id}>
                <td data-label="Run">
                  <a href={runHash(run.run_id)} title={run.run_id}>
                    {run.run_id.slice(0, 12)}…
                  </a>
                </td>
                <td data-label="Poster">
                  <Poster run={run} />
                </td>
                <td data-label="Model">
                  <span className="clip" title={run.endpoint}>
                    {run.endpoint.split("/")[1]}
                  </span>
                </td>
                <td data-label="Status">
                  <span className={`status status-${run.status}`}>{run.status}</span>
                </td>
                <td data-label="Created">{new Date(run.created_at).toLocaleString()}</td>
                <td data-label="Cost">
                  <Cost run={run} />
                </td>
              </tr>
            ))}
            {runs.length === 0 && !loading ? (
              <tr>
                <td colSpan={6}>No runs match.</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      <div className="buttons">
        <button
          type="button"
          disabled={cursors.length === 0}
          onClick={() => {
            setCursor(cursors.at(-1));
            setCursors(cursors.slice(0, -1));
          }}
        >
          Previous page
        </button>
        <button
          type="button"
          disabled={!next}
          onClick={() => {
            setCursors([...cursors, cursor]);
            setCursor(next ?? undefined);
          }}
        >
          Next page
        </button>
      </div>
    </div>
  );
}
