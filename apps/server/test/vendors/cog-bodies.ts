/** The JSON a Cog server answers about a prediction, per flavor; the sources are in cog-server.ts. */
import { type Prediction, pyTime } from "./cog-protocol.js";

const metrics = (p: Prediction) =>
  p.completedAt ? { predict_time: (p.completedAt.getTime() - p.startedAt.getTime()) / 1000 } : {};

/** The python server's PredictionResponse, every field present. */
export const fullBody = (p: Prediction) => ({
  input: p.job.input,
  output: p.output,
  id: p.job.id,
  version: null,
  created_at: p.createdAt,
  started_at: pyTime(p.startedAt),
  completed_at: pyTime(p.completedAt),
  logs: p.job.logs,
  error: p.job.error,
  status: p.job.status,
  metrics: p.job.status === "succeeded" ? metrics(p) : null,
});

/** coglet's state snapshot (webhooks; with `input` for a reattaching PUT). */
export const snapshot = (p: Prediction, withInput: boolean) => ({
  id: p.job.id,
  status: p.job.status,
  ...(withInput ? { input: p.job.input } : {}),
  logs: p.job.logs,
  ...(p.output !== null ? { output: p.output } : {}),
  ...(p.job.error !== null ? { error: p.job.error } : {}),
  metrics: metrics(p),
});

/** coglet's answer to a sync request once the prediction ended. */
export const syncBody = (p: Prediction) => {
  const base = { id: p.job.id, logs: p.job.status === "succeeded" ? p.job.logs : "", status: p.job.status };
  if (p.job.status === "succeeded") return { ...base, output: p.output, metrics: metrics(p) };
  if (p.job.status === "failed") return { ...base, error: p.job.error, metrics: metrics(p) };
  return { ...base, metrics: metrics(p) };
};
