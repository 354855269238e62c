/**
 * A plain-`fetch` client of the local fal queue for its tests, calling it as fal's docs and clients
 * do: submit to the endpoint id, then follow status_url / response_url / cancel_url.
 */
import { expect } from "vitest";
import type { FalKnobs, FalServer } from "./fal-server.js";
import { until } from "./until.js";

export interface Submitted {
  status: string;
  request_id: string;
  status_url: string;
  response_url: string;
  cancel_url: string;
  queue_position: number;
}
export interface StatusBody {
  status: "IN_QUEUE" | "IN_PROGRESS" | "COMPLETED";
  queue_position?: number;
  logs?: { message: string; level: string; source: string; timestamp: string }[] | null;
  metrics?: { inference_time: number | null };
  error?: string;
  error_type?: string;
}

/**
 * Knobs for tests that need no output video, to reset to after each: no queue, a short run, every
 * error knob off. Without a video the server does not run ffmpeg, which would slow the test files
 * running alongside.
 */
export const NO_VIDEO_KNOBS: Partial<FalKnobs> = {
  queueMs: 0,
  latencyMs: 30,
  malformedOutput: "no-video",
  failNext: 0,
  honourCancel: true,
  loseAnswerNext: 0,
  loseAnswerAs: "drop",
  webhookDelayMs: 0,
  dropWebhooksNext: 0,
};

/** A client of the server `fal()` returns, submitting to `endpoint` unless told otherwise. */
export function falClient(fal: () => FalServer, endpoint: string) {
  const key = (token = fal().token) => ({ authorization: `Key ${token}` });

  /** Submits `input`, with `?fal_webhook=<webhook>` when one is given. */
  function submit(
    input: unknown = { prompt: "a dolly shot", duration: "1" },
    to = endpoint,
    token?: string,
    webhook?: string,
  ) {
    const query = webhook === undefined ? "" : `?fal_webhook=${encodeURIComponent(webhook)}`;
    return fetch(`${fal().url}/${to}${query}`, {
      method: "POST",
      headers: { ...key(token), "content-type": "application/json" },
      body: JSON.stringify(input),
    });
  }

  async function submitted(input?: unknown, to?: string, webhook?: string): Promise<Submitted> {
    const res = await submit(input, to, undefined, webhook);
    expect(res.status).toBe(200);
    return (await res.json()) as Submitted;
  }

  async function status(job: Submitted, logs = "1"): Promise<{ code: number; body: StatusBody }> {
    const res = await fetch(`${job.status_url}?logs=${logs}`, { headers: key() });
    return { code: res.status, body: (await res.json()) as StatusBody };
  }

  /** Polls status until `done` holds, returning every answer seen. */
  async function pollUntil(job: Submitted, done: (s: StatusBody) => boolean, timeoutMs = 5_000) {
    const seen: { code: number; body: StatusBody }[] = [];
    await until(async () => {
      const answer = await status(job);
      seen.push(answer);
      return done(answer.body) ? true : undefined;
    }, timeoutMs);
    return seen;
  }
  const completed = (job: Submitted) => pollUntil(job, (s) => s.status === "COMPLETED");

  const cancel = (job: Submitted) => fetch(job.cancel_url, { method: "PUT", headers: key() });

  return { key, submit, submitted, status, pollUntil, completed, cancel };
}
