/** Routes of the run API (interface, "Endpoints"): submit, poll, event stream, cancel, search. */
import type { SearchRunsRequest, SubmitRunRequest } from "@refvid/api-types";
import type { Request, Response, Router } from "express";
import type { AppDeps } from "../../deps.js";
import { cancelRun } from "../../services/cancel-run.js";
import { getRun } from "../../services/get-run.js";
import { StreamSlots, streamRunEvents } from "../../services/run-stream.js";
import { searchRuns } from "../../services/search-runs.js";
import { submitRun, syncResult } from "../../services/submit-run.js";
import { RunEndWaits } from "../../services/wait-for-run.js";
import { callerOf } from "../auth.js";
import type { Drain } from "../drain.js";

/**
 * Sync submits and event streams are held responses: a stopping process lets them run to their
 * runs' ends, and at the drain's deadline they answer with what they have (http/drain.ts).
 */
export function runsRoutes(router: Router, deps: AppDeps, drain: Drain): void {
  const streamSlots = new StreamSlots(deps.config.maxStreamsPerKey);
  const waits = new RunEndWaits(deps, drain.deadline);

  router.get("/v1/runs/:run_id", async (req, res) => {
    res.json(await getRun(deps, callerOf(res), req.params.run_id));
  });

  router.post("/v1/run/:lab/:model/:category", async (req: Request, res: Response) => {
    const slug = `${req.params.lab}/${req.params.model}/${req.params.category}`;
    const caller = callerOf(res);
    const body = req.body as SubmitRunRequest;
    const idempotencyKey = req.get("idempotency-key");
    const outcome = await submitRun(deps, caller, slug, body, idempotencyKey);
    // Sync: the status line and headers go out at once, so a client that gives up knows its run.
    // The route then returns and the body follows when the run ends: a held submit keeps its
    // response and little else, not the whole middleware chain (docs/decisions.md, "Hot path").
    const answerWhenEnded = (runId: string) => {
      res.status(201).setHeader("Content-Type", "application/json; charset=utf-8");
      res.flushHeaders();
      drain.hold(res);
      releaseChain(req);
      syncResult(deps, caller, runId, idempotencyKey, waits).then(
        (done) => {
          if (!res.destroyed) res.end(JSON.stringify(done));
        },
        (err: unknown) => {
          deps.logger.error(
            { err, runId, requestId: res.locals.requestId },
            "answering a sync submit failed",
          );
          res.destroy();
        },
      );
    };

    if (outcome.kind === "replay") {
      res.setHeader("Idempotent-Replayed", "true");
      setRunHeaders(res, outcome.runId);
      return res.status(outcome.status).json(outcome.body);
    }
    if (outcome.kind === "pending") {
      // A retry of a sync submit whose run has not ended: answer as the first request would.
      res.setHeader("Idempotent-Replayed", "true");
      setRunHeaders(res, outcome.runId);
      return answerWhenEnded(outcome.runId);
    }
    const { run } = outcome;
    setRunHeaders(res, run.run_id);
    res.setHeader("X-Concurrency-Remaining", String(outcome.concurrencyRemaining));
    // An async submit's response was stored for replays with the admission.
    if (!body.sync) return res.status(201).json(run);
    return answerWhenEnded(run.run_id);
  });

  router.get("/v1/runs/:run_id/events", async (req, res) => {
    drain.hold(res);
    await streamRunEvents(deps, callerOf(res), req.params.run_id, req, res, {
      slots: streamSlots,
      shutdown: drain.deadline,
    });
  });

  router.post("/v1/runs/:run_id/cancel", async (req, res) => {
    res.json(await cancelRun(deps, callerOf(res), req.params.run_id));
  });

  router.post("/v1/runs/search", async (req, res) => {
    res.status(201).json(await searchRuns(deps, callerOf(res), (req.body ?? {}) as SearchRunsRequest));
  });
}

function setRunHeaders(res: Response, runId: string) {
  res.setHeader("Location", `/v1/runs/${runId}`);
  res.setHeader("X-Run-Id", runId);
}

/**
 * Lets go of what the request no longer needs while its sync answer waits: Express keeps the
 * router's continuation on `req.next`, which holds every middleware's closure, and the parsed body
 * was stored with the run.
 */
function releaseChain(req: Request) {
  req.next = undefined;
  req.body = undefined;
}
