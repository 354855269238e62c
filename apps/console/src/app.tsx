/**
 * The console's shell: sign in with an API key (kept in sessionStorage, so it goes when the tab
 * does), then the playground, runs and account pages, routed by the URL hash (route.ts), which
 * signing in keeps, so a linked run opens once the key is given; or with the admin token, for the
 * operator's page. The pages stay mounted while hidden, so a run being followed and a search keep
 * their state across pages.
 */
import { createRefvidClient, type Model, type RefvidClient } from "@refvid/client";
import { type FormEvent, useEffect, useMemo, useState } from "react";
import { AccountPage } from "./account.js";
import { ErrorMessage } from "./errors.js";
import { OperatorPage } from "./operator.js";
import { PlaygroundPage } from "./playground.js";
import { routeOf } from "./route.js";
import { RunsPage } from "./runs.js";

const KEY_STORAGE = "refvid.apiKey";
const ADMIN_STORAGE = "refvid.adminToken";
const PAGES = [
  { page: "playground", hash: "#/playground", label: "Playground" },
  { page: "runs", hash: "#/runs", label: "Runs" },
  { page: "account", hash: "#/account", label: "Account" },
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/playground");
  useEffect(() => {
    const update = () => setHash(location.hash || "#/playground");
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return hash;
}

type Role = "developer" | "operator";

function SignIn({ onSecret }: { onSecret: (role: Role, secret: string) => void }) {
  const [role, setRole] = useState<Role>("developer");
  const [secret, setSecret] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (secret.trim()) onSecret(role, secret.trim());
  };
  return (
    <main className="signin">
      <h1>refvid console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <fieldset>
          <legend>Sign in as</legend>
          <label className="inline">
            <input type="radio" checked={role === "developer"} onChange={() => setRole("developer")} />
            Developer
          </label>
          <label className="inline">
            <input type="radio" checked={role === "operator"} onChange={() => setRole("operator")} />
            Operator
          </label>
        </fieldset>
        <div className="field">
          <label htmlFor="secret">{role === "developer" ? "API key" : "Admin token"}</label>
          <input
            id="secret"
            type="password"
            autoComplete="off"
            placeholder={role === "developer" ? "sk-test-… or sk-live-…" : "REFVID_ADMIN_TOKEN"}
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
          <p className="help">Kept in this tab only (sessionStorage); requests go to {location.origin}.</p>
        </div>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

function SignOut({ onClick }: { onClick: () => void }) {
  return (
    <button type="button" className="link" onClick={onClick}>
      Sign out
    </button>
  );
}

export function App() {
  const [apiKey, setApiKey] = useState(() => sessionStorage.getItem(KEY_STORAGE) ?? "");
  const hash = useHash();
  // No automatic retries: a 429 or a refused submit is shown to the person, who decides.
  const client: RefvidClient | null = useMemo(
    () =>
      apiKey ? createRefvidClient({ baseUrl: location.origin, apiKey, retry: { maxRetries: 0 } }) : null,
    [apiKey],
  );
  const [adminToken, setAdminToken] = useState(() => sessionStorage.getItem(ADMIN_STORAGE) ?? "");
  const admin: RefvidClient | null = useMemo(
    () =>
      adminToken
        ? createRefvidClient({
            baseUrl: location.origin,
            apiKey: adminToken,
            authScheme: "Bearer",
            retry: { maxRetries: 0 },
          })
        : null,
    [adminToken],
  );
  const signOut = () => {
    sessionStorage.removeItem(KEY_STORAGE);
    sessionStorage.removeItem(ADMIN_STORAGE);
    setApiKey("");
    setAdminToken("");
  };
  const [models, setModels] = useState<Model[]>([]);
  const [modelsError, setModelsError] = useState<unknown>();
  useEffect(() => {
    setModels([]);
    setModelsError(undefined);
    client?.listModels().then((list) => setModels(list.data), setModelsError);
  }, [client]);
  if (admin) {
    return (
      <>
        <header className="top">
          <span className="brand">refvid operator</span>
          <span className="spacer" />
          <SignOut onClick={signOut} />
        </header>
        <main>
          <OperatorPage client={admin} />
        </main>
      </>
    );
  }
  if (!client) {
    return (
      <SignIn
        onSecret={(role, secret) => {
          sessionStorage.setItem(role === "developer" ? KEY_STORAGE : ADMIN_STORAGE, secret);
          if (role === "developer") setApiKey(secret);
          else setAdminToken(secret);
        }}
      />
    );
  }
  const route = routeOf(hash);
  const { page } = route;
  return (
    <>
      <header className="top">
        <span className="brand">refvid</span>
        <nav aria-label="Console">
          {PAGES.map((p) => (
            <a key={p.hash} href={p.hash} aria-current={page === p.page ? "page" : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <SignOut onClick={signOut} />
      </header>
      <main>
        <ErrorMessage error={modelsError} />
        <div hidden={page !== "playground"}>
          <PlaygroundPage client={client} apiKey={apiKey} models={models} />
        </div>
        <div hidden={page !== "runs"}>
          <RunsPage
            client={client}
            models={models}
            active={page === "runs"}
            runId={route.page === "runs" ? route.runId : undefined}
          />
        </div>
        <div hidden={page !== "account"}>
          <AccountPage client={client} active={page === "account"} />
        </div>
      </main>
    </>
  );
}
