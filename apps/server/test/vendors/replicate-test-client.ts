/**
 * A plain-`fetch` client of the local Replicate server for its tests, calling it as Replicate's HTTP
 * API reference shows: create on the official-model route or with `version`, then follow `urls`.
 */
import { expect } from "vitest";
import type { ReplicateServer } from "./replicate-server.js";
import { until } from "./until.js";

export type Prediction = {
  id: string;
  model: string;
  version: string;
  input: Record<string, unknown>;
  logs: string;
  output: unknown;
  error: string | null;
  status: string;
  data_removed: boolean;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  deadline?: string;
  urls: { get: string; cancel: string; web: string };
  metrics: { predict_time?: number; total_time?: number };
};

export const TERMINAL = ["succeeded", "failed", "canceled", "aborted"];

/** A client of the server `server()` returns. */
export function replicateClient(server: () => ReplicateServer) {
  const headers = (extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${server().token}`,
    "content-type": "application/json",
    ...extra,
  });

  function create(
    body: unknown = { input: { prompt: "a fox in the snow" } },
    extra: Record<string, string> = {},
  ) {
    return fetch(`${server().url}/v1/models/${server().model}/predictions`, {
      method: "POST",
      headers: headers(extra),
      body: JSON.stringify(body),
    });
  }

  function createWithVersion(body: unknown) {
    return fetch(`${server().url}/v1/predictions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify(body),
    });
  }

  async function created(body?: unknown, extra?: Record<string, string>): Promise<Prediction> {
    const res = await create(body, extra);
    expect(res.status).toBe(201);
    return (await res.json()) as Prediction;
  }

  async function get(prediction: Pick<Prediction, "urls">): Promise<Prediction> {
    const res = await fetch(prediction.urls.get, { headers: headers() });
    expect(res.status).toBe(200);
    return (await res.json()) as Prediction;
  }

  function cancel(prediction: Pick<Prediction, "urls">) {
    return fetch(prediction.urls.cancel, { method: "POST", headers: headers() });
  }

  async function settle(prediction: Pick<Prediction, "urls">): Promise<Prediction> {
    return until(async () => {
      const now = await get(prediction);
      return TERMINAL.includes(now.status) ? now : undefined;
    });
  }

  return { headers, create, createWithVersion, created, get, cancel, settle };
}
