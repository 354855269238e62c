/**
 * The operator's usage report: what the runs created between two UTC dates did and cost (spend,
 * vendor cost and margin), by key, model, provider, route, organization or day, for one
 * organization or all of them.
 */
import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type FormEvent, useState } from "react";
import { unwrap } from "./admin.js";
import { ErrorMessage, FieldError, fieldProblems } from "./errors.js";
import { usd } from "./money.js";

type Organization = components["schemas"]["Organization"];
type UsageReport = components["schemas"]["UsageReport"];
type GroupBy = components["schemas"]["UsageGroupBy"];

const GROUP_BY: readonly GroupBy[] = ["api_key", "model", "provider", "route", "organization", "day"];
const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;

/** The UTC date `days` after `date` (a `YYYY-MM-DD`), in the same form. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The report's window for two dates picked in the form: from the start of `from` to the end of
 * `to`, both UTC days included (the API's `to` is exclusive).
 */
export function usageWindow(from: string, to: string): { from: string; to: string } {
  return { from: `${from}T00:00:00.000Z`, to: `${addDays(to, 1)}T00:00:00.000Z` };
}

/** A group as shown: an organization's name beside its id when the report is by organization. */
function GroupCell({
  group,
  groupBy,
  orgs,
}: {
  group: string;
  groupBy: GroupBy;
  orgs: readonly Organization[];
}) {
  const name = groupBy === "organization" ? orgs.find((o) => o.organization_id === group)?.name : undefined;
  return (
    <td className="group" data-label={groupBy}>
      {name ? `${name} ` : null}
      <code>{group}</code>
    </td>
  );
}

export function UsagePanel({
  client,
  org,
  orgs,
}: {
  client: RefvidClient;
  org: Organization | undefined;
  /** The organizations the page knows, to name them in a report by organization. */
  orgs: readonly Organization[];
}) {
  const today = new Date().toISOString().slice(0, 10);
  const [from, setFrom] = useState(() => addDays(today, -DEFAULT_DAYS));
  const [to, setTo] = useState(today);
  const [groupBy, setGroupBy] = useState<GroupBy>("api_key");
  const [onlySelected, setOnlySelected] = useState(false);
  const [report, setReport] = useState<UsageReport>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const query = {
        ...usageWindow(from, to),
        group_by: groupBy,
        ...(onlySelected && org ? { organization_id: org.organization_id } : {}),
      };
      setReport(await unwrap(client.api.GET("/admin/v1/usage", { params: { query } })));
    } catch (e) {
      setReport(undefined);
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const { byField, rest } = fieldProblems(error, ["from", "to", "group_by"]);
  const scope = onlySelected && org ? org.organization_id : "";
  return (
    <section aria-label="Usage" className="detail">
      <h2>Usage</h2>
      <p className="help" id="usage-help">
        Runs created from the start of one UTC date to the end of the other.
      </p>
      {rest ? <ErrorMessage error={error} /> : null}
      <form onSubmit={submit} aria-label="Usage report" className="inline-form" aria-busy={busy}>
        <div className="field">
          <label htmlFor="usage-from">From</label>
          <input
            id="usage-from"
            type="date"
            required
            value={from}
            onChange={(e) => setFrom(e.target.value)}
            aria-invalid={byField.from ? true : undefined}
            aria-describedby={byField.from ? "usage-help usage-from-error" : "usage-help"}
          />
          <FieldError id="usage-from-error" problem={byField.from} />
        </div>
        <div className="field">
          <label htmlFor="usage-to">To</label>
          <input
            id="usage-to"
            type="date"
            required
            value={to}
            onChange={(e) => setTo(e.target.value)}
            aria-invalid={byField.to ? true : undefined}
            aria-describedby={byField.to ? "usage-help usage-to-error" : "usage-help"}
          />
          <FieldError id="usage-to-error" problem={byField.to} />
        </div>
        <div className="field">
          <label htmlFor="usage-group-by">Group by</label>
          <select id="usage-group-by" value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
            {GROUP_BY.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
          <FieldError id="usage-group-by-error" problem={byField.group_by} />
        </div>
        <div className="field">
          <label htmlFor="usage-organization">Organization</label>
          <select
            id="usage-organization"
            value={scope}
            onChange={(e) => setOnlySelected(e.target.value !== "")}
          >
            <option value="">All organizations</option>
            {org ? <option value={org.organization_id}>{org.name}</option> : null}
          </select>
        </div>
        <button type="submit" disabled={busy}>
          Show usage
        </button>
      </form>
      {report ? (
        <div className="table-wrap">
          <table className="compact">
            <caption>
              Runs created from {report.from} to {report.to} (exclusive), by {report.group_by}
            </caption>
            <thead>
              <tr>
                <th scope="col">{report.group_by}</th>
                <th scope="col">Environment</th>
                <th scope="col">Runs</th>
                <th scope="col">Succeeded</th>
                <th scope="col">Failures</th>
                <th scope="col">Billed seconds</th>
                <th scope="col">Spend</th>
                <th scope="col">Priced</th>
                <th scope="col">Vendor cost</th>
                <th scope="col">Margin</th>
              </tr>
            </thead>
            <tbody>
              {report.data.length === 0 ? (
                <tr>
                  <td colSpan={10}>No runs in this window.</td>
                </tr>
              ) : null}
              {report.data.map((g) => (
                <tr key={`${g.group} ${g.environment}`}>
                  <GroupCell group={g.group} groupBy={report.group_by} orgs={orgs} />
                  <td data-label="Environment">{g.environment}</td>
                  <td data-label="Runs">{g.runs.total}</td>
                  <td data-label="Succeeded">{g.runs.succeeded}</td>
                  <td data-label="Failures">{g.failures}</td>
                  <td data-label="Billed seconds">{g.billed_seconds}</td>
                  <td data-label="Spend">${g.spend_usd}</td>
                  <td data-label="Priced">${g.priced_usd}</td>
                  <td data-label="Vendor cost">${g.vendor_cost_usd}</td>
                  <td data-label="Margin" className={g.margin_usd.startsWith("-") ? "loss" : undefined}>
                    {usd(g.margin_usd)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
