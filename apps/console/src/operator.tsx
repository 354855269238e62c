/**
 * The operator's side, signed in with the admin token: organizations (find, create), and for one
 * organization its queue weight, its API keys (create, with the secret shown once; change caps; revoke) and its
 * top-ups; and the usage report, for that organization or all of them.
 */

import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { date, unwrap } from "./admin.js";
import { ApiKeys } from "./api-keys.js";
import { ErrorMessage } from "./errors.js";
import { usd } from "./money.js";
import { QueueWeight } from "./queue-weight.js";
import { TopUps } from "./top-ups.js";
import { UsagePanel } from "./usage.js";

type Organization = components["schemas"]["Organization"];

function OrganizationDetail({
  client,
  org,
  onChange,
}: {
  client: RefvidClient;
  org: Organization;
  onChange: () => void;
}) {
  return (
    <section aria-label={`Organization ${org.name}`} className="detail">
      <h2>{org.name}</h2>
      <p>
        <code>{org.organization_id}</code>, {org.tier} tier, balance {usd(org.wallet.balance_usd)} (available{" "}
        {usd(org.wallet.available_usd)})
      </p>
      <QueueWeight key={`weight-${org.organization_id}`} client={client} org={org} onChange={onChange} />
      {/* Keyed by the organization: another one starts with no secret shown and nothing to confirm. */}
      <ApiKeys key={`keys-${org.organization_id}`} client={client} org={org} />
      <TopUps key={`top-ups-${org.organization_id}`} client={client} org={org} onChange={onChange} />
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
                <td data-label="Name">
                  <button
                    type="button"
                    className="link clip"
                    title={o.name}
                    onClick={() => setSelected(o.organization_id)}
                  >
                    {o.name}
                  </button>
                </td>
                <td data-label="Tier">{o.tier}</td>
                <td data-label="Balance">{usd(o.wallet.balance_usd)}</td>
                <td data-label="Created">{date(o.created_at)}</td>
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
