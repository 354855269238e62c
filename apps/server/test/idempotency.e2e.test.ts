/**
 * Idempotency-Key against the real server: replays, a reused key with another body, parallel
 * retries, sync submits still waiting or left by their client, and submits a limit refused.
 */
import { describe, expect, it } from "vitest";
import { useTestRefvid } from "./harness.js";
import {
  cancelInFlight,
  expectConcurrency429,
  FAST,
  keyAdder,
  LONG,
  SUBMIT,
  submitBody,
  waitTerminal,
} from "./limit-helpers.js";

const t = useTestRefvid();
const addKey = keyAdder(t);

describe("idempotency", () => {
  it("replays the same request, refuses a different body, and creates one run under parallel retries", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const key = `idem-${Date.now()}-a`;
    const body = submitBody("idempotent [simulate:delay=100]", { metadata: { case: "replay" } });

    const first = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.body.run_id).toBe(first.body.run_id);
    expect(second.body).toEqual(first.body);
    // Keys are scoped to the organization, not to the API key: its other keys replay too.
    const sibling = await addKey(tenant.organizationId, { rate_limit_per_minute: FAST });
    const fromSibling = await sibling.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(fromSibling.status).toBe(201);
    expect(fromSibling.headers.get("idempotent-replayed")).toBe("true");
    expect(fromSibling.body.run_id).toBe(first.body.run_id);
    const found = await tenant.call("POST", "/v1/runs/search", { metadata: { case: "replay" } });
    expect(found.body.data.map((r: { run_id: string }) => r.run_id)).toEqual([first.body.run_id]);

    const different = await tenant.call(
      "POST",
      SUBMIT,
      submitBody("another prompt", { metadata: { case: "replay" } }),
      { "idempotency-key": key },
    );
    expect(different.status).toBe(422);
    expect(different.body.error).toMatchObject({ type: "idempotency_key_reused", code: 422 });

    const parallelKey = `idem-${Date.now()}-b`;
    const parallelBody = submitBody("parallel [simulate:delay=100]", { metadata: { case: "parallel" } });
    const parallel = await Promise.all(
      Array.from({ length: 10 }, () =>
        tenant.call("POST", SUBMIT, parallelBody, { "idempotency-key": parallelKey }),
      ),
    );
    // The response is stored with the admission: every racer gets the one run.
    expect(parallel.map((res) => res.status)).toEqual(parallel.map(() => 201));
    const created = parallel;
    expect(new Set(created.map((res) => res.body.run_id)).size).toBe(1);
    expect(created.filter((res) => res.headers.get("idempotent-replayed") !== "true")).toHaveLength(1);
    const parallelRuns = await tenant.call("POST", "/v1/runs/search", { metadata: { case: "parallel" } });
    expect(parallelRuns.body.data).toHaveLength(1);
    expect(parallelRuns.body.data[0].run_id).toBe(created[0]?.body.run_id);

    // Keys belong to an organization: another one may use the same key for its own run.
    const stranger = await t.tenant({ rateLimitPerMinute: FAST });
    const theirs = await stranger.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.run_id).not.toBe(first.body.run_id);

    await waitTerminal(tenant.call, [first.body.run_id, created[0]?.body.run_id]);
    await waitTerminal(stranger.call, [theirs.body.run_id]);
  });

  it("answers a retry while a sync submit with the key is still waiting with the same run's end, then replays it", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const key = `idem-${Date.now()}-sync`;
    const body = submitBody("sync [simulate:delay=1500]", { sync: true });
    // fetch resolves at the status line: the server flushes it right after admission.
    const pending = await fetch(`${t.url}${SUBMIT}`, {
      method: "POST",
      headers: {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": key,
      },
      body: JSON.stringify(body),
    });
    expect(pending.status).toBe(201);
    const runId = pending.headers.get("x-run-id");
    expect(runId).toMatch(/^run_/);

    const meanwhile = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(meanwhile.status).toBe(201);
    expect(meanwhile.headers.get("idempotent-replayed")).toBe("true");
    expect(meanwhile.headers.get("x-run-id")).toBe(runId);
    expect(meanwhile.body).toMatchObject({ run_id: runId, status: "succeeded" });

    const terminal = JSON.parse(await pending.text());
    expect(terminal).toMatchObject({ run_id: runId, status: "succeeded" });
    expect(meanwhile.body).toEqual(terminal);

    const replay = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(terminal);
    const runs = await tenant.call("POST", "/v1/runs/search", {});
    expect(runs.body.data).toHaveLength(1);
  });
});

describe("idempotency and limits together", () => {
  it("a submit refused by a limit stores no result: the same key is admitted once there is room", async () => {
    const tenant = await t.tenant({ maxConcurrency: 1, rateLimitPerMinute: FAST });
    try {
      const first = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expect(first.status).toBe(201);
      const key = `idem-${Date.now()}-retry`;
      const body = submitBody("retried [simulate:delay=20000]");
      const refused = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
      expectConcurrency429(refused, "api_key", 1, 1);
      const refusedAgain = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
      expectConcurrency429(refusedAgain, "api_key", 1, 1);
      expect((await tenant.call("POST", `/v1/runs/${first.body.run_id}/cancel`)).status).toBe(200);
      const admitted = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
      expect(admitted.status).toBe(201);
      expect(admitted.headers.get("idempotent-replayed")).toBeNull();
    } finally {
      await cancelInFlight(tenant.call);
    }
  });

  it("a sync submit whose client left still lets the key replay once the run has ended", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: FAST });
    const key = `idem-${Date.now()}-left`;
    const body = submitBody("sync, client leaves [simulate:delay=300]", { sync: true });
    const leave = new AbortController();
    const pending = await fetch(`${t.url}${SUBMIT}`, {
      method: "POST",
      headers: {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": key,
      },
      body: JSON.stringify(body),
      signal: leave.signal,
    });
    expect(pending.status).toBe(201);
    const runId = pending.headers.get("x-run-id") as string;
    leave.abort();
    await pending.text().catch(() => undefined);
    const [run] = await waitTerminal(tenant.call, [runId]);
    expect(run.status).toBe("succeeded");

    // The key is never stuck: a retry answers with the run's end.
    const replay = await tenant.call("POST", SUBMIT, body, { "idempotency-key": key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toMatchObject({ run_id: runId, status: "succeeded" });
  });
});
