/**
 * Following an async Cog prediction (`Prefer: respond-async`) to its end, which comes only in its
 * webhook: Cog has no GET of a prediction and forgets it once ended, and an async prediction is not
 * tied to the request that made it, so its end reaches refvid whatever happened to that request's
 * answer. The receiver keeps the body of a prediction's end with the run's vendor log
 * (services/vendor-hooks.ts), so the worker that follows the run, this one or one that took it over
 * after this one died, reads it there. Probes (a PUT of the id with an input no model takes,
 * cog-probe.ts) report progress, and tell whether the prediction is still in flight on coglet
 * (Cog ≥ 0.17), which reattaches a PUT of an id in flight before it reads the input; Cog ≤ 0.16
 * reads the input first, so there a probe tells nothing.
 *
 * After a lost answer (the PUT's connection dropped once sent, or a gateway's 502/504) the
 * prediction is looked for before anything is created again: a probe that finds it in flight, or
 * a webhook that names it (its `start`, or its end), adopts it. Only when neither shows within
 * `graceMs` is it created again, by the same idempotent PUT, which reattaches to it after all if it
 * is in flight (Cog ≤ 0.16, whose probes cannot see it).
 */
import type { Logger } from "pino";
import type { CogPrediction } from "./cog-held-put.js";
import type { VendorSide } from "./types.js";
import type { VendorResponse } from "./upstream/vendor-http.js";
import { VendorError } from "./upstream/vendor-http.js";

const WITH_RESULT = ["succeeded", "failed"];
const ENDED = [...WITH_RESULT, "canceled"];

/** What following an async prediction works with: the prediction's own steps (cog-prediction.ts). */
export interface AsyncFollow {
  /** The prediction's id (the run's). */
  id: string;
  /** The route's name, for messages. */
  name: string;
  vendor: VendorSide;
  log: Logger | undefined;
  /** Stops the following (its reason thrown). */
  signal: AbortSignal;
  now(): number;
  pollMs: number;
  /** How long a prediction with no sign of itself may take to show one before it is made again. */
  graceMs: number;
  /** How long the end of a prediction found ended is awaited (Cog retries its webhook ~7 min). */
  hookWindowMs: number;
  probe(signal: AbortSignal): Promise<VendorResponse>;
  /** Whether a probe of this box sees a prediction in flight (coglet), as far as known. */
  probesSee(): Promise<boolean>;
  /** Keeps the prediction on the run (once). */
  record(): void;
  /** Reports the model's progress from the prediction's logs. */
  progress(logs: unknown): void;
}

/** How following ended: the prediction's end, or nothing of it is left to follow. */
type Followed =
  | { ended: CogPrediction }
  /** Create it again: it never was (`sure` when that is known), or it was cancelled on the box. */
  | { again: true; sure: boolean; why: string };

/** How many webhooks named the run's prediction so far: those before a PUT are not about its prediction. */
export async function hooksSoFar(f: AsyncFollow): Promise<number> {
  return (await hooksOf(f)).length;
}

/**
 * Before a run's first PUT: the end of its prediction if one was kept (an earlier worker's
 * prediction ended while nobody listened: it died before recording it, or its record was refused),
 * or, resuming the prediction the run recorded, its end once it comes. Null: create it.
 */
export async function priorPrediction(f: AsyncFollow, resuming: boolean): Promise<CogPrediction | null> {
  const hooks = await hooksOf(f);
  if (!resuming) {
    const ended = await endOf(f, hooks, { since: hooks.length, cancelledEnds: false });
    if (ended) {
      f.log?.info("an earlier prediction of the run ended while nobody listened: its webhook has its end");
      f.record();
    }
    return ended;
  }
  return endOrAgain(f, await followPrediction(f, { known: true, since: hooks.length, resumed: true }));
}

/** After Cog took the prediction (202) of a PUT sent after `since` webhooks: its end, or null to create it again. */
export async function takenPrediction(f: AsyncFollow, since: number): Promise<CogPrediction | null> {
  f.record();
  return endOrAgain(f, await followPrediction(f, { known: true, since, resumed: false }));
}

/**
 * After the answer to a PUT sent after `since` webhooks was lost: the prediction's end once found,
 * or null to create it again.
 */
export async function lostPrediction(
  f: AsyncFollow,
  failure: VendorError,
  since: number,
): Promise<CogPrediction | null> {
  f.log?.warn({ reason: failure.message }, "the answer to the prediction's request was lost");
  await f.vendor.log("create_unanswered", f.id, failure.message);
  const found = (how: string) => f.vendor.log("adopted", f.id, how);
  return endOrAgain(f, await followPrediction(f, { known: false, since, resumed: false, found }));
}

async function endOrAgain(f: AsyncFollow, followed: Followed): Promise<CogPrediction | null> {
  if ("ended" in followed) return followed.ended;
  f.log?.warn({ why: followed.why }, "creating the prediction again");
  if (!followed.sure) {
    await f.vendor.log("uncertain", f.id, `${followed.why}: the box may have run it`);
  }
  await f.vendor.log("created_again", f.id, followed.why);
  return null;
}

interface Following {
  /** Cog took it: its PUT answered 202, or the run recorded it. */
  known: boolean;
  /** How many webhooks named the run's prediction before the PUT that made it (or this follow). */
  since: number;
  /**
   * A prediction another worker made: when it was cancelled (Cog cancels a held one whose request
   * dropped, or a box that shut down), no output is coming, and it is made again.
   */
  resumed: boolean;
  /** Called once a prediction not known shows itself. */
  found?: (how: string) => Promise<void>;
}

/** Follows the run's prediction to its end, looking for it first unless it is known. */
async function followPrediction(
  f: AsyncFollow,
  { known, since, resumed, found }: Following,
): Promise<Followed> {
  const began = f.now();
  let shown = known;
  let goneAt: number | null = null;
  const show = async (how: string) => {
    if (shown) return;
    shown = true;
    f.record();
    await found?.(how);
  };
  const cancelled = {
    again: true,
    sure: true,
    why: "the run's prediction was cancelled on the box",
  } as const;
  for (;;) {
    f.signal.throwIfAborted();
    const hooks = await hooksOf(f);
    if (hooks.length > since) await show("its webhook named it");
    const ended = await endOf(f, hooks, { since, cancelledEnds: !resumed });
    if (ended) return { ended };
    const lastEnd = hooks.findLastIndex((hook) => ENDED.includes(hook.status ?? ""));
    if (resumed && lastEnd >= since && hooks[lastEnd]?.status === "canceled") return cancelled;
    const answer = await f.probe(f.signal).catch(() => null);
    f.signal.throwIfAborted();
    if (answer?.status === 202) {
      goneAt = null;
      await show("a probe found it in flight");
      f.progress((answer.body as CogPrediction | null)?.logs);
    } else if (answer?.status === 422 && (await f.probesSee())) {
      // None of the run's is in flight on the box.
      if (!shown && f.now() - began >= f.graceMs) {
        return { again: true, sure: false, why: "no sign of the lost prediction" };
      }
      if (resumed && hooks[lastEnd]?.status === "canceled") return cancelled;
      goneAt ??= f.now();
      if (shown && f.now() - goneAt >= f.hookWindowMs) throw endUnheard(f);
    } else if (answer?.status === 422 && !shown && f.now() - began >= f.graceMs) {
      // This Cog's probes cannot see it: the PUT again reattaches if it is in flight after all.
      return { again: true, sure: false, why: "no sign of the lost prediction" };
    }
    await f.vendor.pause(f.pollMs, f.signal);
  }
}

/** The webhooks about the prediction, oldest first. */
async function hooksOf(f: AsyncFollow): Promise<{ status: string | null }[]> {
  return (await f.vendor.hooks()).filter((hook) => hook.upstreamId === f.id);
}

/**
 * The prediction's end from its kept webhook: the latest that says `succeeded` or `failed`, or,
 * with `cancelledEnds`, `canceled` after `since` (an earlier one's is not this prediction's end);
 * null while there is none.
 */
async function endOf(
  f: AsyncFollow,
  hooks: { status: string | null }[],
  { since, cancelledEnds }: { since: number; cancelledEnds: boolean },
): Promise<CogPrediction | null> {
  for (let i = hooks.length - 1; i >= 0; i--) {
    const status = hooks[i]?.status ?? "";
    const isEnd = WITH_RESULT.includes(status) || (cancelledEnds && status === "canceled" && i >= since);
    if (!isEnd) continue;
    const payload = await f.vendor.hookPayload(f.id, status);
    if (payload === null) continue;
    try {
      const body = JSON.parse(payload) as CogPrediction | null;
      if (body && body.status === status) return body;
    } catch {
      // not the prediction: looked past
    }
  }
  return null;
}

function endUnheard(f: AsyncFollow): VendorError {
  const message =
    `${f.name}: prediction ${f.id} ended on the box, but its webhook did not reach refvid in ` +
    `${Math.round(f.hookWindowMs / 1000)} s: check that the box reaches REFVID_PUBLIC_URL`;
  f.log?.error(message);
  return new VendorError(message, null, false);
}
