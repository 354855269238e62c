/**
 * How a process follows its store's event subscription: while it reconnects, /readyz says so with
 * a 503; once it is back, sync waiters and loops re-check at once what they may have missed.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore, type Store, type StoreEvent } from "@refvid/store";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type RunningRefvid, startRefvid } from "../src/runtime.js";
import { eventually } from "./harness.js";

/** The in-memory store with a subscription the test drives, as another process's events would. */
function subscribable(memory: MemoryStore) {
  const listeners = new Set<(event: StoreEvent) => void>();
  const store = new Proxy(memory, {
    get(target, property, receiver) {
      if (property === "subscribe") {
        return async (listener: (event: StoreEvent) => void) => {
          listeners.add(listener);
          return async () => void listeners.delete(listener);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
  const emit = (event: StoreEvent) => {
    for (const listener of listeners) listener(event);
  };
  return { store, emit };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(store: Store): Promise<RunningRefvid & { token: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-catch-up-"));
  const token = randomBytes(24).toString("hex");
  const config = loadConfig({
    REFVID_STORE: "memory",
    PORT: "0",
    REFVID_ROLE: "api", // runs are ended by "another process": the test
    REFVID_ADMIN_TOKEN: token,
    REFVID_DATA_DIR: dataDir,
    REFVID_SEED_DEMO: "false",
  });
  const refvid = await startRefvid(config, { store, logger: pino({ level: "silent" }) });
  cleanups.push(async () => {
    await refvid.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return Object.assign(refvid, { token });
}

describe("a process whose store subscription drops", () => {
  it("is not ready while it reconnects, and answers a sync submit at once when it is back", async () => {
    const memory = new MemoryStore();
    const { store, emit } = subscribable(memory);
    const refvid = await start(store);
    const admin = async (path: string, body: unknown) => {
      const res = await fetch(`${refvid.url}/admin/v1${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${refvid.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return (await res.json()) as any;
    };
    const org = await admin("/organizations", { name: "catch-up" });
    await admin(`/organizations/${org.organization_id}/top-ups`, { amount_usd: "10.00" });
    const { key } = await admin(`/organizations/${org.organization_id}/api-keys`, {});

    const readyz = async () => {
      const res = await fetch(`${refvid.url}/readyz`);
      return { status: res.status, body: await res.json() };
    };
    expect(await readyz()).toEqual({
      status: 200,
      body: { status: "ok", checks: { store: "ok", listen: "ok" } },
    });

    const answer = fetch(`${refvid.url}/v1/run/lab-d/model-d/reference-to-video`, {
      method: "POST",
      headers: { authorization: `Key ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        input: { prompt: "p", image_urls: ["https://example.com/a.png"], duration: "4s" },
        sync: true,
      }),
    }).then(async (res) => {
      const body = (await res.json()) as any; // a sync submit sends its headers at once, the run at its end
      return { at: Date.now(), status: res.status, body };
    });
    const runId = await eventually(async () => {
      const [run] = await memory.searchRuns({
        organizationId: org.organization_id,
        environment: "live",
        limit: 1,
      });
      return run?.id;
    });

    emit({ kind: "subscription", state: "reconnecting" });
    expect(await readyz()).toEqual({
      status: 503,
      body: { status: "unavailable", checks: { store: "ok", listen: "reconnecting" } },
    });
    // Let the sync waiter settle into its longer backstop waits (250, 500, 1000 ms...).
    await new Promise((resolve) => setTimeout(resolve, 800));
    // Another process ends the run meanwhile; its "ended" event is lost with the subscription.
    const ended = await memory.completeRun({
      runId,
      outcome: { status: "failed", error: { type: "provider_error", code: 502, message: "x" } },
      now: new Date(),
    });
    expect(ended.kind).toBe("completed");

    const back = Date.now();
    emit({ kind: "subscription", state: "ok" });
    const { at, status, body } = await answer;
    expect({ status, runStatus: body.status }).toEqual({ status: 201, runStatus: "failed" });
    expect(at - back).toBeLessThan(150); // not the waiter's own poll, which is up to 1 s away
    expect((await readyz()).status).toBe(200);
  });
});
