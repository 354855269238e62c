/**
 * The wallet, the key's budget, concurrency and rate limit as gauges; spend over time and the
 * wallet's ledger; the webhook secret of the key's environment and the delivery log. With a test
 * key, what its runs were priced at beside the wallet's spend, which they never touch.
 */
import type { Account, RefvidClient, WebhookDelivery, WebhookSecret } from "@refvid/client";
import { useCallback, useEffect, useState } from "react";
import { BudgetMeter } from "./budget-meter.js";
import { ErrorMessage } from "./errors.js";
import { Ledger } from "./ledger.js";
import { sumUsd, usd } from "./money.js";
import { runHash } from "./route.js";
import { SpendChart } from "./spend-chart.js";

/** The most test runs added up for their price: ten pages of the runs search. */
const PRICED_RUNS_MAX = 1000;

/** What the succeeded test runs were priced at (others are priced 0.00), the newest first. */
async function testRunsPriced(client: RefvidClient): Promise<{ amount: string; runs: number; all: boolean }> {
  const amounts: string[] = [];
  for await (const run of client.iterateRuns({ status: ["succeeded"], limit: 100 })) {
    if (amounts.length === PRICED_RUNS_MAX)
      return { amount: sumUsd(amounts), runs: amounts.length, all: false };
    amounts.push(run.billing?.amount ?? "0.00");
  }
  return { amount: sumUsd(amounts), runs: amounts.length, all: true };
}

function Gauge(props: { id: string; label: string; value: number; max: number; text: string }) {
  return (
    <div className="gauge">
      <label htmlFor={props.id}>{props.label}</label>
      <meter id={props.id} min={0} max={Math.max(props.max, 1)} value={props.value} high={props.max * 0.8}>
        {props.text}
      </meter>
      <span>{props.text}</span>
    </div>
  );
}

export function AccountPage({ client, active }: { client: RefvidClient; active: boolean }) {
  const [account, setAccount] = useState<Account | null>(null);
  const [secret, setSecret] = useState<WebhookSecret | null>(null);
  const [shown, setShown] = useState(false);
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>([]);
  const [priced, setPriced] = useState<Awaited<ReturnType<typeof testRunsPriced>> | null>(null);
  const [error, setError] = useState<unknown>();
  /** Counts the page's loads: the chart and the ledger load again with each that reached the account. */
  const [generation, setGeneration] = useState(0);

  const refresh = useCallback(async () => {
    setError(undefined);
    try {
      const [a, s, d] = await Promise.all([
        client.getAccount(),
        client.getWebhookSecret(),
        client.listWebhookDeliveries({ limit: 20 }),
      ]);
      setAccount(a);
      setSecret(s);
      setDeliveries(d.data);
      // Not before: a refused request (a 429) is said once, and spends no more of the rate limit.
      setGeneration((g) => g + 1);
      setPriced(a.environment === "test" ? await testRunsPriced(client) : null);
    } catch (e) {
      setError(e);
    }
  }, [client]);
  useEffect(() => {
    if (active) void refresh();
  }, [refresh, active]);

  const wallet = account?.wallet;
  return (
    <div className="account">
      <h1>Account</h1>
      <ErrorMessage error={error} />
      {account && wallet ? (
        <>
          <p>
            Organization <code>{account.organization_id}</code>, key <code>{account.api_key_id}</code> (
            {account.environment})
          </p>
          <section aria-labelledby="wallet-heading">
            <h2 id="wallet-heading">Wallet</h2>
            <dl className="wallet">
              <dt>Balance</dt>
              <dd data-testid="balance">${wallet.balance_usd}</dd>
              <dt>Reserved</dt>
              <dd>${wallet.reserved_usd}</dd>
              <dt>Available</dt>
              <dd>${wallet.available_usd}</dd>
              <dt>Spent (live runs)</dt>
              <dd data-testid="spent">{usd(wallet.total_spent_usd)}</dd>
              {priced ? (
                <>
                  <dt>Test runs, priced</dt>
                  <dd data-testid="test-priced">
                    {usd(priced.amount)} for {priced.all ? "" : "the latest "}
                    {priced.runs} succeeded run{priced.runs === 1 ? "" : "s"}; not charged
                  </dd>
                </>
              ) : null}
            </dl>
          </section>
          {account.api_key_budget ? (
            <section aria-labelledby="budget-heading">
              <h2 id="budget-heading">This key's budget</h2>
              <BudgetMeter budget={account.api_key_budget} label="This key's budget" />
            </section>
          ) : null}
          <section aria-labelledby="limits-heading">
            <h2 id="limits-heading">Limits</h2>
            <Gauge
              id="gauge-org"
              label={`Organization concurrency (${account.concurrency.tier} tier)`}
              value={account.concurrency.in_flight}
              max={account.concurrency.limit}
              text={`${account.concurrency.in_flight} of ${account.concurrency.limit} runs in flight`}
            />
            <Gauge
              id="gauge-key"
              label="This key's concurrency"
              value={account.api_key_concurrency.in_flight}
              max={account.api_key_concurrency.limit}
              text={`${account.api_key_concurrency.in_flight} of ${account.api_key_concurrency.limit} runs in flight`}
            />
            <Gauge
              id="gauge-rate"
              label="Rate limit, used this minute"
              value={account.rate_limit.per_minute - account.rate_limit.remaining}
              max={account.rate_limit.per_minute}
              text={`${account.rate_limit.remaining} of ${account.rate_limit.per_minute} requests left, resets in ${account.rate_limit.reset_seconds} s`}
            />
          </section>
        </>
      ) : null}
      <SpendChart client={client} generation={generation} />
      <Ledger client={client} generation={generation} />
      <section aria-labelledby="webhooks-heading">
        <h2 id="webhooks-heading">Webhooks</h2>
        <p>
          Signing secret of <span data-testid="webhook-secret-environment">{secret?.environment ?? "…"}</span>{" "}
          runs: <code data-testid="webhook-secret">{shown ? secret?.secret : "whsec_••••••••"}</code>{" "}
          <button type="button" onClick={() => setShown(!shown)} aria-pressed={shown}>
            {shown ? "Hide" : "Show"}
          </button>
        </p>
        <p className="help">
          It verifies the webhooks of runs made with {secret?.environment ?? "this"} keys only; keys of the
          other environment have a secret of their own.
        </p>
        <div className="table-wrap">
          <table>
            <caption>Recent deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Run</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">URL</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr key={d.id}>
                  <td data-label="Event">{d.event_type}</td>
                  <td data-label="Run">
                    {d.run_id === null ? (
                      "spend alert"
                    ) : (
                      <a href={runHash(d.run_id)} title={d.run_id}>
                        <code>{d.run_id.slice(0, 12)}…</code>
                      </a>
                    )}
                  </td>
                  <td data-label="State">{d.state}</td>
                  <td data-label="Attempts">{d.attempts.length}</td>
                  <td data-label="URL">
                    <span className="clip" title={d.url}>
                      {d.url}
                    </span>
                  </td>
                </tr>
              ))}
              {deliveries.length === 0 ? (
                <tr>
                  <td colSpan={5}>No deliveries yet: submit a run with a webhook URL.</td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      </section>
      <button type="button" onClick={() => void refresh()}>
        Refresh
      </button>
    </div>
  );
}
