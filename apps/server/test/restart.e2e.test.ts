/**
 * The embedded default store across restarts (`REFVID_STORE=pglite:<dir>`): organizations, keys,
 * balances and runs survive, and runs that were in flight when the process stopped, gracefully or
 * by SIGKILL, are taken up again and end with their money settled or released.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./harness.js";
import { type Fleet, fleet, type RefvidProcess } from "./processes.js";

let dir: string;
let processes: Fleet;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-restart-"));
  processes = await fleet({ REFVID_STORE: `pglite:${join(dir, "data")}`, REFVID_WORKER_LEASE_MS: "1000" });
});

afterAll(async () => {
  await processes?.stopAll();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

const call = async (p: RefvidProcess, method: string, path: string, auth: string, body?: unknown) => {
  const res = await fetch(`${p.url}${path}`, {
    method,
    headers: { authorization: auth, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe("the embedded store across restarts", () => {
  it.each(["SIGTERM", "SIGKILL"] as const)(
    "keeps everything and ends in-flight runs correctly after %s",
    async (signal) => {
      let p = await processes.start("all");
      const admin = `Bearer ${processes.adminToken}`;
      const org = (await call(p, "POST", "/admin/v1/organizations", admin, { name: "durable" })).body;
      await call(p, "POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, admin, {
        amount_usd: "10.00",
      });
      const key = `Key ${(await call(p, "POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, admin, { rate_limit_per_minute: 100_000 })).body.key}`;
      const input = (prompt: string) => ({
        prompt,
        image_urls: ["https://example.com/a.png"],
        duration: "4s",
      });

      const done = await call(p, "POST", "/v1/run/lab-d/model-d/reference-to-video", key, {
        input: input("quick [simulate:delay=10]"),
        sync: true,
      });
      expect(done.body, JSON.stringify(done.body)).toMatchObject({ status: "succeeded" });
      const pending: string[] = [];
      for (let i = 0; i < 3; i++) {
        pending.push(
          (
            await call(p, "POST", "/v1/run/lab-d/model-d/reference-to-video", key, {
              input: input(`slow ${i} [simulate:delay=4000]`),
            })
          ).body.run_id as string,
        );
      }
      await eventually(
        async () =>
          (await call(p, "GET", "/v1/account", key)).body.concurrency.in_flight === 3 ? true : undefined,
        10_000,
        "runs in flight",
      );
      await processes.kill(p, signal);

      p = await processes.start("all");
      const account = (await call(p, "GET", "/v1/account", key)).body;
      expect(account.organization_id).toBe(org.organization_id);
      expect((await call(p, "GET", `/v1/runs/${done.body.run_id}`, key)).body).toMatchObject({
        status: "succeeded",
        billing: { amount: "0.284" },
      });

      // Runs in flight at the stop come back (after their lease) and end; nothing stays reserved.
      const ended = await eventually(
        async () => {
          const runs = await Promise.all(
            pending.map(async (id) => (await call(p, "GET", `/v1/runs/${id}`, key)).body),
          );
          return runs.every((r) => r.completed_at !== null) ? runs : undefined;
        },
        40_000,
        "the runs in flight at the stop to end",
      );
      for (const run of ended) expect(run, JSON.stringify(run)).toMatchObject({ status: "succeeded" });
      const after = (await call(p, "GET", "/v1/account", key)).body;
      expect(after.wallet).toMatchObject({
        balance_usd: "8.864",
        reserved_usd: "0.00",
        total_spent_usd: "1.136",
      });
      expect(after.concurrency.in_flight).toBe(0);
      await processes.kill(p, "SIGTERM");
    },
    90_000,
  );
});
