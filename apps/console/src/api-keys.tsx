/**
 * An organization's API keys: create one (its secret shown once), change a key's caps and its
 * spend budget in place, and revoke one, after a confirm step in its row: a revoked key is
 * refused at once, for good.
 */
import type { components } from "@refvid/api-types";
import type { RefvidClient } from "@refvid/client";
import { type FormEvent, useCallback, useState } from "react";
import { date, unwrap, useLoaded } from "./admin.js";
import { ConfirmCell } from "./confirm-cell.js";
import { ErrorMessage } from "./errors.js";
import { KeyBudgetCell } from "./key-budget.js";
import { KeyCapsCells } from "./key-caps.js";

type Organization = components["schemas"]["Organization"];
type ApiKey = components["schemas"]["ApiKey"];

/** A key's state: Revoke, then Revoke or Keep in its place, or when it was revoked. */
function RevokeCell({ apiKey, onRevoke }: { apiKey: ApiKey; onRevoke: () => Promise<void> }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const prefix = `${apiKey.key_prefix}…`;
  if (apiKey.revoked_at) return <td data-label="State">revoked {date(apiKey.revoked_at)}</td>;
  if (!confirming) {
    return (
      <td data-label="State">
        <button type="button" onClick={() => setConfirming(true)} aria-label={`Revoke ${apiKey.key_prefix}`}>
          Revoke
        </button>
      </td>
    );
  }
  const revoke = async () => {
    setBusy(true);
    try {
      await onRevoke();
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  return (
    <ConfirmCell
      label="State"
      id={`revoke-${apiKey.api_key_id}`}
      question={
        <>
          Revoke <code>{prefix}</code>? Every request with it is refused from now on; this cannot be undone.
        </>
      }
      yes={`Yes, revoke ${prefix}`}
      busy={busy}
      onYes={() => void revoke()}
      onKeep={() => setConfirming(false)}
    />
  );
}

export function ApiKeys({ client, org }: { client: RefvidClient; org: Organization }) {
  const [secret, setSecret] = useState("");
  const [keyName, setKeyName] = useState("");
  const [environment, setEnvironment] = useState<"live" | "test">("live");
  const [error, setError] = useState<unknown>();
  const path = { organization_id: org.organization_id };

  const { data: keys = [], reload: load } = useLoaded(
    useCallback(async () => {
      const params = { path: { organization_id: org.organization_id } };
      return (await unwrap(client.api.GET("/admin/v1/organizations/{organization_id}/api-keys", { params })))
        .data;
    }, [client, org.organization_id]),
    setError,
  );

  const act = async (action: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await action();
      await load();
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
  const revoke = (key: ApiKey) =>
    act(() =>
      unwrap(
        client.api.DELETE("/admin/v1/api-keys/{api_key_id}", {
          params: { path: { api_key_id: key.api_key_id } },
        }),
      ),
    );

  return (
    <>
      <h3>API keys</h3>
      <ErrorMessage error={error} />
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
        <table className="compact keys">
          <caption className="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">Max in flight</th>
              <th scope="col">Requests / min</th>
              <th scope="col">Caps</th>
              <th scope="col">Budget</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.api_key_id}>
                <td data-label="Key">
                  <code>{key.key_prefix}…</code>
                </td>
                <td data-label="Name">
                  <span className="clip" title={key.name ?? undefined}>
                    {key.name ?? "—"}
                  </span>
                </td>
                <td data-label="Created">{date(key.created_at)}</td>
                <KeyCapsCells client={client} apiKey={key} onSaved={load} />
                <KeyBudgetCell client={client} apiKey={key} onSaved={load} />
                <RevokeCell apiKey={key} onRevoke={() => revoke(key)} />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
