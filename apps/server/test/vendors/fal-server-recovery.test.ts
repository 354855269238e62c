/**
 * The local fal queue's knobs for a create whose answer is lost (lost-answer.ts), and its record of
 * which jobs are paid: what a client needs to find, and not pay twice for, a job it may have
 * created.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FalJob, FalServer } from "./fal-server.js";
import { startFalServer } from "./fal-server.js";
import { falClient, NO_VIDEO_KNOBS } from "./fal-test-client.js";
import { until } from "./until.js";

const ENDPOINT = "fal-ai/refvid-test/reference-to-video";
const defaults = NO_VIDEO_KNOBS;

let fal: FalServer;
beforeAll(async () => {
  fal = await startFalServer({ endpoints: [ENDPOINT], knobs: defaults });
});
afterAll(() => fal.close());
afterEach(() => {
  Object.assign(fal.knobs, defaults);
});

const { key, submit, submitted, completed, pollUntil, cancel } = falClient(() => fal, ENDPOINT);
const lastJob = () => [...fal.stats.jobs.values()].at(-1) as FalJob;
const statusOf = async (job: FalJob) => {
  const url = `${fal.url}/fal-ai/refvid-test/requests/${job.requestId}/status`;
  const res = await fetch(url, { headers: key() });
  return ((await res.json()) as { status: string }).status;
};

describe("fal queue: a submit whose answer is lost", () => {
  it("drop: the connection closes unanswered, yet the job was queued, counted and runs to its end", async () => {
    fal.knobs.loseAnswerNext = 1;
    const before = fal.stats.submits;
    const from = fal.stats.requests.length;
    await expect(submit({ prompt: "lost", duration: "1" })).rejects.toThrow(TypeError);

    expect(fal.stats.submits).toBe(before + 1);
    const job = lastJob();
    expect(job).toMatchObject({
      answerLost: true,
      endpointId: ENDPOINT,
      input: { prompt: "lost", duration: "1" },
    });
    expect(fal.stats.requests.slice(from)).toMatchObject([{ kind: "submit", status: 0 }]);
    await until(async () => ((await statusOf(job)) === "COMPLETED" ? true : undefined));
    expect(job).toMatchObject({ status: "COMPLETED", failed: false, paid: true });

    // Only the next submit: the one after is answered.
    const next = await submitted();
    expect(fal.stats.jobs.get(next.request_id)?.answerLost).toBe(false);
  });

  it("502: a gateway's Bad Gateway page, yet the job was queued and runs", async () => {
    Object.assign(fal.knobs, { loseAnswerNext: 2, loseAnswerAs: "502" });
    const before = fal.stats.submits;
    const from = fal.stats.requests.length;
    for (const prompt of ["one", "two"]) {
      const res = await submit({ prompt });
      expect(res.status).toBe(502);
      expect(res.headers.get("content-type")).toBe("text/html");
      expect(await res.text()).toContain("502 Bad Gateway");
      expect(lastJob()).toMatchObject({ answerLost: true, input: { prompt } });
    }
    expect(fal.stats.submits).toBe(before + 2);
    expect(fal.stats.requests.slice(from).map((r) => [r.kind, r.status])).toEqual([
      ["submit", 502],
      ["submit", 502],
    ]);
    const job = lastJob();
    await until(async () => ((await statusOf(job)) === "COMPLETED" ? true : undefined));
    expect((await submit()).status).toBe(200);
  });

  it("refused creates do not use it up: only an accepted submit loses its answer", async () => {
    fal.knobs.loseAnswerNext = 1;
    const bad = await fetch(`${fal.url}/${ENDPOINT}`, { method: "POST", headers: key(), body: "{nope" });
    expect(bad.status).toBe(422);
    expect(fal.knobs.loseAnswerNext).toBe(1);
    await expect(submit()).rejects.toThrow(TypeError);
    expect(fal.knobs.loseAnswerNext).toBe(0);
  });
});

describe("fal queue: paid jobs", () => {
  it("a job cancelled IN_QUEUE is never paid", async () => {
    fal.knobs.queueMs = 10_000;
    const job = await submitted();
    expect(fal.stats.jobs.get(job.request_id)?.paid).toBe(false);
    expect((await cancel(job)).status).toBe(202);
    await completed(job);
    expect(fal.stats.jobs.get(job.request_id)).toMatchObject({ cancelledIn: "IN_QUEUE", paid: false });
  });

  it("a job cancelled IN_PROGRESS is paid, as is one that ran to its end, failed or not", async () => {
    fal.knobs.latencyMs = 10_000;
    const running = await submitted();
    await pollUntil(running, (s) => s.status === "IN_PROGRESS");
    await cancel(running);
    expect(fal.stats.jobs.get(running.request_id)).toMatchObject({
      cancelledIn: "IN_PROGRESS",
      status: "COMPLETED",
      paid: true,
    });

    Object.assign(fal.knobs, { latencyMs: 20, failNext: 1 });
    const failed = await submitted();
    const succeeded = await submitted();
    await completed(failed);
    await completed(succeeded);
    expect(fal.stats.jobs.get(failed.request_id)).toMatchObject({ failed: true, paid: true });
    expect(fal.stats.jobs.get(succeeded.request_id)).toMatchObject({ failed: false, paid: true });
  });

  it("counts a run's paid jobs by the webhook URL its submits carried", async () => {
    fal.knobs.queueMs = 10_000;
    const hook = (run: string) => `http://127.0.0.1:9/hooks/fal?run=${run}`;
    const queued = await submitted(undefined, undefined, hook("run-a"));
    await cancel(queued);
    fal.knobs.queueMs = 0;
    const ran = await submitted(undefined, undefined, hook("run-a"));
    await submitted(undefined, undefined, hook("run-b"));
    await completed(ran);
    const paidFor = (run: string) =>
      [...fal.stats.jobs.values()].filter((j) => j.paid && j.webhookUrl === hook(run)).length;
    await until(() => (paidFor("run-b") === 1 ? true : undefined));
    expect(paidFor("run-a")).toBe(1);
  });
});
