/**
 * The operator's side, signed in with the admin token: organizations (find, create), and for one
 * organization its API keys (create, with the secret shown once; change caps; revoke) and its
 * top-ups; and the usage report, for that organization or all of them.
 */

import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { unwrap } from "./admin.js";
import { ErrorMessage } from "./errors.js";
import { KeyCapsCells } from "./key-caps.js";
import { UsagePanel } from "./usage.js";

type Organization = components["schemas"]["Organization"];
type ApiKey = components["schemas"]["ApiKey"];
type TopUp = components["schemas"]["TopUpEntry"];

const date = (iso: string) => new Date(iso).toLocaleString();

function OrganizationDetail({
  client,
  org,
  onChange,
}: {
  client: RefvidClient;
  org: Organization;
  onChange: () => void;
}) {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [topUps, setTopUps] = useState<TopUp[]>([]);
  const [secret, setSecret] = useState("");
  const [keyName, setKeyName] = useState("");
  const [environment, setEnvironment] = useState<"live" | "test">("live");
  const [amount, setAmount] = useState("");
  const [note, setNote] = useState("");
  const [error, setError] = useState<unknown>();
  const path = { organization_id: org.organization_id };

  const load = useCallback(async () => {
    try {
      const params = { path: { organization_id: org.organization_id } };
      const [k, t] = await Promise.all([
        unwrap(client.api.GET("/admin/v1/organizations/{organization_id}/api-keys", { params })),
        unwrap(client.api.GET("/admin/v1/organizations/{organization_id}/top-ups", { params })),
      ]);
      setKeys(k.data);
      setTopUps(t.data);
    } catch (e) {
      setError(e);
    }
  }, [client, org.organization_id]);
  useEffect(() => {
    setSecret("");
    void load();
  }, [load]);

  const act = async (action: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await action();
      await load();
      onChange();
    } catch (e) {
      setError(e);
    }
  };

  const createKey = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const body = { environment, ...(keyName.trim() ? { name: keyName.trim() } : {}) };
      const created = await unwrap(
        client.api.POST("/admin/v1/organizations/{organization_id}/api-keys", { params: { path }, body }),
      );
      setSecret(created.key);
      setKeyName("");
    });
  };
  const topUp = (event: FormEvent) => {
    event.preventDefault();
    void act(async () => {
      const body = { amount_usd: amount.trim(), ...(note.trim() ? { note: note.trim() } : {}) };
      await unwrap(
        client.api.POST("/admin/v1/organizations/{organization_id}/top-ups", { params: { path }, body }),
      );
      setAmount("");
      setNote("");
    });
  };
  const revoke = (key: ApiKey) =>
    act(() =>
      unwrap(
        client.api.DELETE("/admin/v1/api-keys/{api_key_id}", {
          params: { path: { api_key_id: key.api_key_id } },
        }),
      ),
    );

  return (
    <section aria-label={`Organization ${org.name}`} className="detail">
      <h2>{org.name}</h2>
      <p>
        <code>{org.organization_id}</code>, {org.tier} tier, balance ${org.wallet.balance_usd} (available $
        {org.wallet.available_usd})
      </p>
      <ErrorMessage error={error} />
      <h3>API keys</h3>
      {secret ? (
        <div className="secret" role="status">
          <p>Copy the new key now: it is not shown again.</p>
          <code data-testid="new-key">{secret}</code>
        </div>
      ) : null}
      <form onSubmit={createKey} aria-label="Create an API key" className="inline-form">
        <div className="field">
          <label htmlFor="key-name">Name</label>
          <input id="key-name" value={keyName} onChange={(e) => setKeyName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="key-environment">Environment</label>
          <select
            id="key-environment"
            value={environment}
            onChange={(e) => setEnvironment(e.target.value as "live" | "test")}
          >
            <option value="live">live</option>
            <option value="test">test</option>
          </select>
        </div>
        <button type="submit">Create key</button>
      </form>
      <div className="table-wrap">
        <table className="compact">
          <caption className="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Max in flight</th>
              <th scope="col">Requests / min</th>
              <th scope="col">Caps</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.api_key_id}>
                <td>
                  <code>{key.key_prefix}…</code>
                </td>
                <td>{key.name ?? "—"}</td>
                <td>{date(key.created_at)}</td>
                <KeyCapsCells client={client} apiKey={key} onSaved={load} />
                <td>
                  {key.revoked_at ? (
                    `revoked ${date(key.revoked_at)}`
                  ) : (
                    <button type="button" onClick={() => revoke(key)} aria-label={`Revoke ${key.key_prefix}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Top-ups</h3>
      <form onSubmit={topUp} aria-label="Top up" className="inline-form">
        <div className="field">
          <label htmlFor="top-up-amount">Amount (USD)</label>
          <input
            id="top-up-amount"
            inputMode="decimal"
            required
            pattern="[0-9]{1,9}(\.[0-9]{1,6})?"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="top-up-note">Note</label>
          <input id="top-up-note" value={note} onChange={(e) => setNote(e.target.value)} />
        </div>
        <button type="submit">Add funds</button>
      </form>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Top-ups</caption>
          <thead>
            <tr>
              <th scope="col">Amount</th>
              <th scope="col">Note</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {topUps.map((t) => (
              <tr key={t.top_up_id}>
                <td>${t.amount_usd}</td>
                <td>{t.note ?? "—"}</td>
                <td>{date(t.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function OperatorPage({ client }: { client: RefvidClient }) {
  const [orgs, setOrgs] = useState<Organization[]>([]);
  const [selected, setSelected] = useState<string>("");
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>();

  const load = useCallback(async () => {
    try {
      setOrgs(
        (await unwrap(client.api.GET("/admin/v1/organizations", { params: { query: { limit: 100 } } }))).data,
      );
    } catch (e) {
      setError(e);
    }
  }, [client]);
  useEffect(() => {
    void load();
  }, [load]);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const org = await unwrap(client.api.POST("/admin/v1/organizations", { body: { name: name.trim() } }));
      setName("");
      setSelected(org.organization_id);
      await load();
    } catch (e) {
      setError(e);
    }
  };

  const org = orgs.find((o) => o.organization_id === selected);
  return (
    <div className="operator">
      <h1>Organizations</h1>
      <ErrorMessage error={error} />
      <form onSubmit={create} aria-label="Create an organization" className="inline-form">
        <div className="field">
          <label htmlFor="org-name">Name</label>
          <input id="org-name" required value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <button type="submit">Create organization</button>
      </form>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Organizations, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Tier</th>
              <th scope="col">Balance</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {orgs.map((o) => (
              <tr key={o.organization_id} aria-selected={o.organization_id === selected}>
                <td>
                  <button type="button" className="link" onClick={() => setSelected(o.organization_id)}>
                    {o.name}
                  </button>
                </td>
                <td>{o.tier}</td>
                <td>${o.wallet.balance_usd}</td>
                <td>{date(o.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {org ? <OrganizationDetail client={client} org={org} onChange={() => void load()} /> : null}
      <UsagePanel client={client} org={org} orgs={orgs} />
    </div>
  );
}
