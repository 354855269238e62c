/**
 * `GET /v1/runs/{run_id}/events` against the real server: the run first, its changes at most every
 * 250 ms, `done` with the terminal run and the close; Last-Event-ID; isolation; the per-key cap.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Tenant, useTestRefvid } from "./harness.js";
import { type SseEvent, stream } from "./sse.js";

const t = useTestRefvid({ REFVID_MAX_STREAMS_PER_KEY: "3" });
const SUBMIT = "/v1/run/lab-d/model-d/reference-to-video";
const body = (prompt: string) => ({
  input: { prompt, image_urls: ["https://example.com/a.png"], duration: "4s" },
});

let tenant: Tenant;
beforeAll(async () => {
  tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
});
const submit = async (prompt: string, who: Tenant = tenant) =>
  (await who.call("POST", SUBMIT, body(prompt))).body;

describe("a run's event stream", () => {
  it("sends the run, its changes at most every 250 ms, then done with the terminal run, and closes", async () => {
    const run = await submit("watched [simulate:delay=1500]");
    const { status, headers, events } = await stream(t.url, tenant.apiKey, run.run_id);
    expect(status).toBe(200);
    expect(headers.get("cache-control")).toContain("no-cache");
    expect(events[0]?.event).toBe("run");
    expect(events[0]?.data.run_id).toBe(run.run_id);
    const last = events.at(-1);
    expect(last).toMatchObject({
      event: "done",
      id: "succeeded:1",
      data: { status: "succeeded", progress: 1 },
    });
    expect(events.filter((e) => e.event === "done")).toHaveLength(1);
    // It went through processing with progress, each event a new state, never two within 250 ms.
    const progress = events.filter((e) => e.data.status === "processing" && e.data.progress > 0);
    expect(progress.length).toBeGreaterThan(1);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    // Times are when the client read each event: one read late brings the next one closer, by as
    // much as a busy machine delays a read. Without the throttle they would come 150 ms apart (the
    // simulated run reports progress every tenth of its 1,500 ms).
    for (let i = 1; i < events.length; i++) {
      expect((events[i] as SseEvent).at - (events[i - 1] as SseEvent).at).toBeGreaterThanOrEqual(200);
    }
    // Each id is the state it shows; a queued run's names its place too (`queued::0`).
    for (const { id, data } of events) {
      const place = data.queue_position === undefined ? "" : `:${data.queue_position}`;
      expect(id).toBe(`${data.status}:${data.progress ?? ""}${place}`);
    }
  });

  it("ends with done when the run is cancelled", async () => {
    const run = await submit("long [simulate:delay=20000]");
    const streaming = stream(t.url, tenant.apiKey, run.run_id);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await tenant.call("POST", `/v1/runs/${run.run_id}/cancel`)).status).toBe(200);
    const { events } = await streaming;
    expect(events.at(-1)).toMatchObject({ event: "done", data: { status: "cancelled" } });
  });

  it("resumes with Last-Event-ID: a run that ended sends only done; an unchanged one sends nothing new", async () => {
    const ended = await submit("quick");
    const first = await stream(t.url, tenant.apiKey, ended.run_id);
    const final = first.events.at(-1) as SseEvent;
    const again = await stream(t.url, tenant.apiKey, ended.run_id, { lastEventId: final.id });
    expect(again.events.map((e) => e.event)).toEqual(["done"]);

    const running = await submit("slow [simulate:delay=20000]");
    const seen = await stream(t.url, tenant.apiKey, running.run_id, { until: (e) => e.length > 0 });
    const quiet = await stream(t.url, tenant.apiKey, running.run_id, {
      lastEventId: (seen.events[0] as SseEvent).id,
      signal: AbortSignal.timeout(500),
    }).catch((error: Error) => error);
    // Nothing changed in those 500 ms (its first progress comes after 2 s): no event, only the wait.
    expect(quiet).toBeInstanceOf(Error);
    expect((quiet as Error).name).toMatch(/TimeoutError|AbortError/);
    await tenant.call("POST", `/v1/runs/${running.run_id}/cancel`);

    const queued = await (await t.tenant({ rateLimitPerMinute: 100_000, maxConcurrency: 1 })).call(
      "POST",
      SUBMIT,
      body("slow [simulate:delay=20000]"),
    );
    // Not its key: a stream of another organization's run is a 404, before any event.
    const foreign = await stream(t.url, tenant.apiKey, queued.body.run_id);
    expect(foreign.status).toBe(404);
    expect(foreign.json.error.type).toBe("run_not_found");
  });

  it("holds a key to REFVID_MAX_STREAMS_PER_KEY open streams, with a 429 beyond", async () => {
    const capped = await t.tenant({ rateLimitPerMinute: 100_000 });
    const run = await submit("held [simulate:delay=20000]", capped);
    const controllers = Array.from({ length: 3 }, () => new AbortController());
    const open = controllers.map((c) =>
      stream(t.url, capped.apiKey, run.run_id, { signal: c.signal, until: () => false }).catch(() => null),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await stream(t.url, capped.apiKey, run.run_id);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(refused.json.error).toMatchObject({ type: "too_many_streams", code: 429 });
    controllers[0]?.abort();
    await open[0];
    // The slot frees once the server sees the client go.
    let reopened = await stream(t.url, capped.apiKey, run.run_id, { until: (e) => e.length > 0 });
    for (let i = 0; i < 20 && reopened.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      reopened = await stream(t.url, capped.apiKey, run.run_id, { until: (e) => e.length > 0 });
    }
    expect(reopened.status).toBe(200);
    await capped.call("POST", `/v1/runs/${run.run_id}/cancel`);
    for (const c of controllers) c.abort();
    await Promise.all(open);
  });
});

describe("@refvid/client on the stream", () => {
  it("streamRun yields the run to its end, and run() reports progress through onProgress", async () => {
    const run = await submit("streamed [simulate:delay=800]");
    const seen: string[] = [];
    for await (const state of tenant.client.streamRun(run.run_id)) seen.push(state.status);
    expect(seen[0]).toMatch(/queued|processing/);
    expect(seen.at(-1)).toBe("succeeded");

    const progress: number[] = [];
    const done = await tenant.client.run(
      "lab-d/model-d/reference-to-video",
      { prompt: "with progress [simulate:delay=800]", image_urls: ["https://example.com/a.png"] },
      { onProgress: (r) => progress.push(r.progress ?? 0) },
    );
    expect(done.status).toBe("succeeded");
    expect(progress.at(-1)).toBe(1);
    expect(progress.some((p) => p > 0 && p < 1)).toBe(true);
  });
});

describe("live and test keys", () => {
  it("a test key cannot stream a live run", async () => {
    const live = await t.tenant({ rateLimitPerMinute: 100_000 });
    const key = await t.admin("POST", `/admin/v1/organizations/${live.organizationId}/api-keys`, {
      environment: "test",
    });
    const run = await submit("live run", live);
    const res = await stream(t.url, key.body.key, run.run_id);
    expect(res.status).toBe(404);
  });
});
