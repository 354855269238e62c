/**
 * A Cog prediction's life on the server's timers: `starting` (`queueMs`), the model running with
 * tqdm-style progress (`latencyMs`), then its end (the video, a raised error, or `canceled`). The
 * sources are in cog-server.ts.
 */
import { readFile } from "node:fs/promises";
import type { CogContext } from "./cog-context.js";
import { NOT_A_VIDEO, type Prediction, progressLine } from "./cog-protocol.js";
import { cogWebhooks } from "./cog-webhooks.js";
import { testVideo } from "./video.js";

/** A prediction's lifecycle over `ctx`. */
export function predictionLife(ctx: CogContext) {
  const { knobs, inFlight, later } = ctx;
  const webhook = cogWebhooks(ctx);

  const finish = (
    p: Prediction,
    status: "succeeded" | "failed" | "canceled",
    error: string | null = null,
  ) => {
    if (p.completedAt) return;
    for (const timer of p.timers) clearTimeout(timer);
    p.job.status = status;
    p.job.error = error;
    p.completedAt = new Date();
    if (inFlight.get(p.key) === p) inFlight.delete(p.key);
    webhook(p, "completed");
    p.end();
  };

  const makeOutput = async (): Promise<string> => {
    const seq = ctx.next();
    const bytes = knobs.malformedOutput ? NOT_A_VIDEO : null;
    const path = await testVideo(knobs.outputSeconds);
    if (knobs.outputAs === "data") {
      return `data:video/mp4;base64,${(bytes ?? (await readFile(path))).toString("base64")}`;
    }
    ctx.uploads.set(String(seq), bytes ? { bytes } : { path });
    return `${ctx.base()}/uploads/${seq}/output.mp4`;
  };

  /** The model's last step: it raises (`failNext`) or returns the video. */
  const conclude = (p: Prediction) => {
    if (knobs.holdEnd) {
      p.timers.push(later(() => conclude(p), 10));
      return;
    }
    if (p.willFail) {
      p.job.logs += `Traceback (most recent call last):\n  File "/src/predict.py", line 48, in predict\n    video = self.pipe(prompt)\ntorch.OutOfMemoryError: ${knobs.failMessage}\n`;
      finish(p, "failed", knobs.failMessage);
      return;
    }
    void makeOutput().then((output) => {
      if (p.completedAt) return;
      p.output = output;
      p.job.output = output;
      finish(p, "succeeded");
    });
  };

  const run = (p: Prediction) => {
    const { latencyMs, progressSteps: steps } = knobs;
    p.timers.push(
      later(() => {
        if (p.completedAt || p.job.cancelled) return;
        p.job.status = "processing";
        p.job.paid = true;
        p.onRunning?.();
        if (knobs.flavor === "coglet") webhook(p, "start");
        for (let step = 0; step <= steps; step++) {
          p.timers.push(
            later(
              () => {
                if (p.completedAt) return;
                p.job.logs += progressLine(step, steps);
                webhook(p, "logs");
                if (step === steps) conclude(p);
              },
              (latencyMs * step) / steps,
            ),
          );
        }
      }, knobs.queueMs),
    );
  };

  const cancel = (p: Prediction) => {
    p.job.cancelled = true;
    p.job.cancelledIn = p.job.status;
    if (knobs.cancelLatencyMs <= 0) finish(p, "canceled");
    else later(() => finish(p, "canceled"), knobs.cancelLatencyMs);
  };

  return { webhook, conclude, run, cancel };
}

export type PredictionLife = ReturnType<typeof predictionLife>;
