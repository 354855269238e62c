/**
 * The wallet's ledger on the account page (`GET /v1/ledger`): its entries newest first, of the
 * kinds picked, the next page appended with its `next_cursor`. Each row says what moved, by how
 * much, the wallet right after, and what it was for: a run, a top-up, an operator's reason.
 */
import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { useCallback, useState } from "react";
import { date, unwrap } from "./admin.js";
import { ErrorMessage } from "./errors.js";
import { useFreshLoad } from "./fresh-load.js";
import { usd } from "./money.js";
import { runHash } from "./route.js";

type LedgerEntry = components["schemas"]["LedgerEntry"];
type LedgerPage = components["schemas"]["LedgerPage"];
type LedgerKind = LedgerEntry["kind"];

const PAGE_SIZE = 20;
/** The filter's choices: everything, the balance's moves, the holds, or one kind. */
const FILTERS: readonly { label: string; kinds: readonly LedgerKind[] }[] = [
  { label: "All entries", kinds: [] },
  {
    label: "Balance: top-ups, reversals, adjustments, charges",
    kinds: ["top_up", "reversal", "adjustment", "charge"],
  },
  { label: "Holds: reservations and releases", kinds: ["reservation", "release"] },
  ...(["top_up", "reversal", "adjustment", "charge", "reservation", "release"] as const).map((kind) => ({
    label: kind.replace("_", "-"),
    kinds: [kind],
  })),
];

/** An id cut to its first 12 characters; the whole is in the title. */
function ShortId({ id }: { id: string }) {
  return <code title={id}>{id.length > 13 ? `${id.slice(0, 12)}…` : id}</code>;
}

/** What an entry was for: its run, its top-up, or the operator's reason and name. */
function Subject({ entry }: { entry: LedgerEntry }) {
  if (entry.run_id) {
    return (
      <a href={runHash(entry.run_id)} title={entry.run_id}>
        run <ShortId id={entry.run_id} />
      </a>
    );
  }
  return (
    <>
      {entry.top_up_id ? (
        <>
          top-up <ShortId id={entry.top_up_id} />{" "}
        </>
      ) : null}
      {entry.reason ? <span className="ledger-reason">“{entry.reason}”</span> : null}
      {entry.actor ? <span className="muted"> by {entry.actor}</span> : null}
    </>
  );
}

/** Loads the first page again whenever `generation` moves past 0, or the filter changes. */
export function Ledger({ client, generation }: { client: RefvidClient; generation: number }) {
  const [filter, setFilter] = useState(0);
  const [entries, setEntries] = useState<LedgerEntry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [more, setMore] = useState<{ busy: boolean; error?: unknown }>({ busy: false });
  const kinds = FILTERS[filter]?.kinds ?? [];

  const page = useCallback(
    (cursor: string | undefined) => {
      const query = {
        limit: PAGE_SIZE,
        ...(kinds.length ? { kind: [...kinds] } : {}),
        ...(cursor ? { cursor } : {}),
      };
      return unwrap(client.api.GET("/v1/ledger", { params: { query } }));
    },
    [client, kinds],
  );
  const first = useFreshLoad(
    useCallback(() => page(undefined), [page]),
    useCallback((got: LedgerPage) => {
      setEntries(got.data);
      setNext(got.next_cursor);
    }, []),
    generation,
  );
  /** The next page, after those shown; the filter waits meanwhile, so the page is of the entries shown. */
  const loadMore = async () => {
    if (!next) return;
    setMore({ busy: true });
    try {
      const got = await page(next);
      setEntries((shown) => [...shown, ...got.data]);
      setNext(got.next_cursor);
      setMore({ busy: false });
    } catch (e) {
      setMore({ busy: false, error: e });
    }
  };
  const busy = first.busy || more.busy;

  return (
    <section aria-labelledby="ledger-heading" aria-busy={busy}>
      <h2 id="ledger-heading">Ledger</h2>
      <p className="help">
        Every change of the wallet, newest first. The balance is the sum of top-ups, reversals, adjustments
        and charges; what is held, of reservations and releases. Test runs move no money and have no entries.
      </p>
      <div className="field inline-field">
        <label htmlFor="ledger-kind">Show</label>
        <select
          id="ledger-kind"
          value={filter}
          disabled={more.busy}
          onChange={(e) => {
            setMore({ busy: false });
            setFilter(Number(e.target.value));
          }}
        >
          {FILTERS.map((f, i) => (
            <option key={f.label} value={i}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      <ErrorMessage error={first.error ?? more.error} />
      <div className="table-wrap">
        <table className="compact ledger">
          <caption className="visually-hidden">Ledger entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Amount</th>
              <th scope="col">Balance after</th>
              <th scope="col">Held after</th>
              <th scope="col">For</th>
              <th scope="col">Key</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.ledger_entry_id}>
                <td data-label="When">{date(e.created_at)}</td>
                <td data-label="Kind">{e.kind.replace("_", "-")}</td>
                <td data-label="Amount" className={e.amount_usd.startsWith("-") ? "loss" : undefined}>
                  {usd(e.amount_usd)}
                </td>
                <td data-label="Balance after">{usd(e.balance_usd)}</td>
                <td data-label="Held after">{usd(e.reserved_usd)}</td>
                <td data-label="For" className="group">
                  <Subject entry={e} />
                </td>
                <td data-label="Key">{e.api_key_id ? <ShortId id={e.api_key_id} /> : "—"}</td>
              </tr>
            ))}
            {entries.length === 0 && !busy ? (
              <tr>
                <td colSpan={7}>No entries{kinds.length ? " of this kind" : ""} yet.</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      {next ? (
        <button type="button" onClick={() => void loadMore()} disabled={busy}>
          Load more
        </button>
      ) : null}
    </section>
  );
}
