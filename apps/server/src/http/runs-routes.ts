/** Routes of the run API (interface, "Endpoints"): submit, poll, cancel, search, preview, account. */
import type { PricePreviewRequest, SearchRunsRequest } from "@refvid/api-types";
import { isModelSlug, isTerminal, MODEL_SLUGS, NotFoundError } from "@refvid/core";
import { type Request, type Response, Router } from "express";
import type { AppDeps } from "../deps.js";
import { getAccount } from "../services/account.js";
import type { Caller } from "../services/request-context.js";
import { cancelRun, getRun, previewPrice, searchRuns, waitForRunEnd } from "../services/runs.js";
import { type SubmitBody, submitRun } from "../services/submit-run.js";
import { callerOf } from "./auth.js";

/** `shutdown` aborts sync waits when the server stops. */
export function runsRouter(deps: AppDeps, shutdown: AbortSignal): Router {
  const router = Router();

  router.post("/v1/run/:lab/:model/:category", async (req: Request, res: Response) => {
    const slug = `${req.params.lab}/${req.params.model}/${req.params.category}`;
    if (!isModelSlug(slug))
      throw new NotFoundError("model_not_found", `No model ${slug}. Models: ${MODEL_SLUGS.join(", ")}.`);
    const caller = callerOf(res);
    const body = req.body as SubmitBody;
    const idempotencyKey = req.get("idempotency-key");
    const outcome = await submitRun(deps, caller, slug, body, idempotencyKey);

    if (outcome.kind === "replay") {
      res.setHeader("Idempotent-Replayed", "true");
      setRunHeaders(res, outcome.runId);
      return res.status(outcome.status).json(outcome.body);
    }
    if (outcome.kind === "follow") {
      // A retry of a sync submit whose run has not ended: answer as the first request would.
      res.setHeader("Idempotent-Replayed", "true");
      setRunHeaders(res, outcome.runId);
      return answerSync(res, caller, outcome.runId, idempotencyKey);
    }
    const { run } = outcome;
    setRunHeaders(res, run.run_id);
    res.setHeader("X-Concurrency-Remaining", String(outcome.concurrencyRemaining));
    // An async submit's response was stored for replays with the admission.
    if (!body.sync) return res.status(201).json(run);
    return answerSync(res, caller, run.run_id, idempotencyKey);
  });

  /**
   * Sync: the status line and headers go out now, so a client that gives up knows its run. The wait
   * goes on even if the client leaves, so a retry with the same Idempotency-Key replays the end.
   */
  async function answerSync(
    res: Response,
    caller: Caller,
    runId: string,
    idempotencyKey: string | undefined,
  ) {
    res.status(201).setHeader("Content-Type", "application/json; charset=utf-8");
    res.flushHeaders();
    const done =
      (await waitForRunEnd(deps, caller.organization.id, runId, shutdown)) ??
      (await getRun(deps, caller, runId)); // shutting down: answer with the run as it stands
    if (idempotencyKey && isTerminal(done.status)) {
      await deps.store.completeIdempotency(caller.organization.id, idempotencyKey, 201, done);
    }
    if (!res.destroyed) res.end(JSON.stringify(done));
  }

  router.get("/v1/runs/:run_id", async (req, res) => {
    res.json(await getRun(deps, callerOf(res), req.params.run_id));
  });

  router.post("/v1/runs/:run_id/cancel", async (req, res) => {
    res.json(await cancelRun(deps, callerOf(res), req.params.run_id));
  });

  router.post("/v1/runs/search", async (req, res) => {
    res.status(201).json(await searchRuns(deps, callerOf(res), (req.body ?? {}) as SearchRunsRequest));
  });

  router.post("/v1/pricing/preview", (req, res) => {
    res.status(201).json(previewPrice(req.body as PricePreviewRequest));
  });

  router.get("/v1/account", async (_req, res) => {
    res.json(await getAccount(deps, callerOf(res), res.locals.rate));
  });

  router.get("/v1/webhooks/secret", (_req, res) => {
    res.json({ secret: callerOf(res).organization.webhookSecret });
  });

  return router;
}

function setRunHeaders(res: Response, runId: string) {
  res.setHeader("Location", `/v1/runs/${runId}`);
  res.setHeader("X-Run-Id", runId);
}
