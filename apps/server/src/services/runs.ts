/** Poll, cancel, search and price preview (interface, "Endpoints" 2, 4, 5). */
import { createHash } from "node:crypto";
import type { PricePreview, Run, RunPage, SearchRunsRequest } from "@refvid/api-types";
import {
  ConflictError,
  checkModelRules,
  formatUsd,
  InvalidRequestError,
  isTerminal,
  type ModelInput,
  type ModelSlug,
  NotFoundError,
  normalizeInput,
  priceRequest,
} from "@refvid/core";
import type { AppDeps } from "../deps.js";
import type { Caller } from "./request-context.js";
import { toApiRun } from "./run-view.js";

const runNotFound = (runId: string) =>
  new NotFoundError("run_not_found", `No run ${runId} in this organization.`);

export async function getRun(deps: AppDeps, caller: Caller, runId: string): Promise<Run> {
  const run = await deps.store.getRun(caller.organization.id, runId);
  if (!run) throw runNotFound(runId);
  return toApiRun(run, deps.signer, deps.clock.now());
}

export async function cancelRun(deps: AppDeps, caller: Caller, runId: string): Promise<Run> {
  const now = deps.clock.now();
  const result = await deps.store.completeRun({
    runId,
    organizationId: caller.organization.id,
    outcome: {
      status: "cancelled",
      error: { type: "cancelled", code: 499, message: "The run was cancelled at the client's request." },
    },
    now,
  });
  switch (result.kind) {
    case "not_found":
      throw runNotFound(runId);
    case "already_terminal":
    case "lease_lost": // a cancel holds no lease; listed so the switch stays exhaustive
      throw new ConflictError(
        "run_not_cancellable",
        `Run ${runId} is ${result.run.status} and can no longer be cancelled.`,
      );
    case "completed":
      deps.events.cancelRequested(runId);
      deps.events.runEnded(runId);
      return toApiRun(result.run, deps.signer, now);
  }
}

/** Waits until the run is terminal (sync submits), polling the store as a backstop to events. */
export async function waitForRunEnd(
  deps: AppDeps,
  organizationId: string,
  runId: string,
  signal: AbortSignal,
): Promise<Run | null> {
  let wake: () => void = () => {};
  const off = deps.events.onRunEnded(runId, () => wake());
  const onAbort = () => wake();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (let delay = 250; !signal.aborted; delay = Math.min(delay * 2, 2000)) {
      const run = await deps.store.getRun(organizationId, runId);
      if (run && isTerminal(run.status)) return toApiRun(run, deps.signer, deps.clock.now());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (signal.aborted) wake();
      });
    }
    return null;
  } finally {
    off();
    signal.removeEventListener("abort", onAbort);
  }
}

export function previewPrice(body: { endpoint: ModelSlug; input: Record<string, unknown> }): PricePreview {
  const request = normalizeInput(body.endpoint, body.input as ModelInput);
  const problems = checkModelRules(request);
  if (problems.length > 0) throw new InvalidRequestError(problems);
  const price = priceRequest(request);
  return {
    endpoint: body.endpoint,
    currency: "usd",
    unit_price: formatUsd(price.unitPrice),
    billable_seconds: price.billableSeconds,
    amount: formatUsd(price.amount),
    price_tier: price.tier,
  };
}

interface Cursor {
  t: string;
  i: string;
  /** Hash of the filters the cursor was made with; a cursor only continues the same search. */
  f: string;
}

export async function searchRuns(deps: AppDeps, caller: Caller, body: SearchRunsRequest): Promise<RunPage> {
  const { cursor, limit = 20, ...filters } = body;
  const filterHash = createHash("sha256").update(JSON.stringify(filters)).digest("base64url").slice(0, 16);
  let after: { createdAt: Date; id: string } | undefined;
  if (cursor) {
    const decoded = decodeCursor(cursor);
    if (!decoded || decoded.f !== filterHash) {
      throw new InvalidRequestError([
        {
          field: "body.cursor",
          message: "is not a next_cursor of this search; send the same filters with it",
          rule: "cursor",
        },
      ]);
    }
    after = { createdAt: new Date(decoded.t), id: decoded.i };
  }
  const createdAfter = parseInstant(filters.created_after, "body.created_after");
  const createdBefore = parseInstant(filters.created_before, "body.created_before");
  const runs = await deps.store.searchRuns({
    organizationId: caller.organization.id,
    limit: limit + 1,
    ...(filters.status ? { statuses: filters.status } : {}),
    ...(filters.endpoint ? { endpoint: filters.endpoint } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    ...(filters.metadata ? { metadata: filters.metadata } : {}),
    ...(after ? { after } : {}),
  });
  const page = runs.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = runs.length > limit && last !== undefined;
  const now = deps.clock.now();
  return {
    data: page.map((run) => toApiRun(run, deps.signer, now)),
    has_more: hasMore,
    next_cursor:
      hasMore && last ? encodeCursor({ t: last.createdAt.toISOString(), i: last.id, f: filterHash }) : null,
  };
}

/** A date-time the schema let through but the calendar does not know (`…T23:59:60Z`) is a 400, not a dropped filter. */
function parseInstant(text: string | undefined, field: string): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) {
    throw new InvalidRequestError([{ field, message: "is not a valid date-time", rule: "format" }]);
  }
  return date;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString("base64url");

function decodeCursor(text: string): Cursor | null {
  try {
    const value = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Partial<Cursor>;
    if (typeof value.t !== "string" || typeof value.i !== "string" || typeof value.f !== "string")
      return null;
    if (Number.isNaN(Date.parse(value.t))) return null;
    if (value.i.includes("\u0000")) return null; // no run id holds NUL; Postgres text cannot
    return value as Cursor;
  } catch {
    return null;
  }
}
