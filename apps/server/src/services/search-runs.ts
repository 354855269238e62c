/**
 * Search (interface, "Endpoints" 4): the organization's runs of the caller's environment, newest
 * first, with keyset cursors.
 */
import { createHash } from "node:crypto";
import type { RunPage, SearchRunsRequest } from "@refvid/api-types";
import { InvalidRequestError } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import type { Caller } from "./request-context.js";
import { toApiRun } from "./run-view.js";

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
    environment: caller.apiKey.environment,
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
