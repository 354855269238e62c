/**
 * Submit: model rules, price, then admission in ONE store call
 * (key cap, organization cap, balance, reservation, queued run, idempotency record).
 */
import type { Run, SubmitRunRequest } from "@refvid/api-types";
import {
  BudgetExceededError,
  ConcurrencyLimitError,
  type EarlierRequestDecision,
  hashRequest,
  IDEMPOTENCY_TTL_MS,
  IdempotencyKeyReusedError,
  InsufficientBalanceError,
  isTerminal,
  type ModelSlug,
  NotFoundError,
  PRIORITY_RANK,
  scopedIdempotencyKey,
  UnauthorizedError,
} from "@refvid/core";
import { type IdempotencyRequest, type NewRun, type NewVideo, queuedRun } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { newRunId } from "../ids.js";
import { toApiRun } from "../views/run-view.js";
import { getRun } from "./get-run.js";
import { readRunRequest } from "./run-request.js";
import { checkUploadReferences } from "./uploads.js";
import type { RunEndWaits } from "./wait-for-run.js";
import { checkWebhookEvents, checkWebhookUrl } from "./webhook-url.js";

export type SubmitBody = SubmitRunRequest;

export type SubmitOutcome =
  | { kind: "admitted"; run: Run; concurrencyRemaining: number }
  /**
   * The Idempotency-Key was used before: `replay` answers with the stored response; `pending` (a sync
   * submit admitted earlier whose run has not ended) waits on that run.
   */
  | Exclude<EarlierRequestDecision, { kind: "mismatch" }>;

export async function submitRun(
  deps: AppDeps,
  caller: Caller,
  slug: ModelSlug,
  body: SubmitBody,
  idempotencyKey: string | undefined,
  options: {
    video?: NewVideo;
    /** What the Idempotency-Key's hash is taken of instead of `body` (uploads named by their bytes). */
    hashedAs?: SubmitBody;
  } = {},
): Promise<SubmitOutcome> {
  const { served, input, price } = await readRunRequest(deps, slug, body.input, [
    ...(body.webhook_url ? checkWebhookUrl(body.webhook_url, deps.config.allowLocalUrls) : []),
    ...checkWebhookEvents(body),
  ]);
  const now = deps.clock.now();
  const scopedKey = idempotencyKey
    ? scopedIdempotencyKey(caller.apiKey.environment, idempotencyKey)
    : undefined;
  await checkUploadReferences(
    deps,
    { organizationId: caller.organization.id, environment: caller.apiKey.environment },
    served.model,
    input,
  ).catch(async (err: unknown) => {
    // A retry answers as the request it repeats did, though an upload it names has gone since:
    // the admission below replays the stored answer (or refuses another body under the key).
    const retry =
      err instanceof NotFoundError &&
      scopedKey !== undefined &&
      (await deps.store.hasIdempotencyKey(caller.organization.id, scopedKey, now));
    if (!retry) throw err;
  });

  const run: NewRun = {
    id: newRunId(),
    organizationId: caller.organization.id,
    apiKeyId: caller.apiKey.id,
    endpoint: slug,
    input,
    webhookUrl: body.webhook_url ?? null,
    ...(body.webhook_events ? { webhookEvents: body.webhook_events } : {}),
    metadata: body.metadata ?? {},
    priceUnit: price.unit,
    unitPrice: price.unitPrice,
    reservedSeconds: price.billableSeconds,
    reserved: price.amount,
    createdAt: now,
  };
  if (options.video) run.video = options.video;
  const idempotency: IdempotencyRequest | undefined = scopedKey
    ? {
        key: scopedKey,
        // A video's terms are part of the request: a remix never replays a create.
        requestHash: hashRequest(slug, {
          ...(options.hashedAs ?? body),
          ...(options.video ? { video: options.video } : {}),
        }),
        expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
        // An async submit's answer is the run as admitted: stored with the admission, so a retry
        // replays it even if this process dies before answering. A sync submit's is its end.
        ...(body.sync
          ? {}
          : {
              response: {
                status: 201,
                body: toApiRun(
                  queuedRun(run, caller.apiKey.environment, PRIORITY_RANK[caller.apiKey.priority]),
                  deps.signer,
                  now,
                ),
              },
            }),
      }
    : undefined;
  const result = await deps.store.admitRun({ run, idempotency, now });
  switch (result.kind) {
    case "admitted":
      deps.metrics.runAdmitted(slug);
      return {
        kind: "admitted",
        run: toApiRun(result.run, deps.signer, now),
        concurrencyRemaining: result.concurrencyRemaining,
      };
    case "rejected": {
      const d = result.decision;
      deps.metrics.runRejected(d.reason);
      if (d.reason === "balance") throw new InsufficientBalanceError(d.required, d.available);
      if (d.reason === "budget") throw new BudgetExceededError(run.apiKeyId, d.required, d);
      throw new ConcurrencyLimitError(d.reason, d.limit, d.inFlight);
    }
    case "api_key_gone":
      throw new UnauthorizedError("This API key was revoked.");
    case "idempotency":
      if (result.decision.kind === "mismatch") throw new IdempotencyKeyReusedError();
      return result.decision;
  }
}

/**
 * The answer of a sync submit: the run once it has ended (or, when the server shuts down first, as
 * it stands), stored as the Idempotency-Key's response once it is terminal. The wait goes on if the
 * client leaves, so that a retry with the same key replays the end.
 */
export async function syncResult(
  deps: AppDeps,
  caller: Caller,
  runId: string,
  idempotencyKey: string | undefined,
  waits: RunEndWaits,
): Promise<Run> {
  const done = (await waits.wait(caller.organization.id, runId)) ?? (await getRun(deps, caller, runId));
  if (idempotencyKey && isTerminal(done.status)) {
    await deps.store.completeIdempotency(
      caller.organization.id,
      scopedIdempotencyKey(caller.apiKey.environment, idempotencyKey),
      { status: 201, body: done },
    );
  }
  return done;
}
