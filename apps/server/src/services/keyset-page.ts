/**
 * Keyset pages, newest first by `(created_at, id)`: the opaque cursor a page hands out and takes
 * back. A cursor carries the last row's keyset and a hash of the filters it was made with, so it
 * only continues the same listing.
 */
import { createHash } from "node:crypto";
import { InvalidRequestError } from "@refvid/core";
import type { Keyset } from "@refvid/store";

interface Cursor {
  t: string;
  i: string;
  /** Hash of the filters the cursor was made with. */
  f: string;
}

export interface Page<V> {
  data: V[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Where a page starts: after the cursor's row (none for a first page), for these filters only. */
export function pageStart(
  cursor: string | undefined,
  filters: unknown,
  field: string,
  what = "listing",
): { after?: Keyset; filterHash: string } {
  const filterHash = createHash("sha256").update(JSON.stringify(filters)).digest("base64url").slice(0, 16);
  if (cursor === undefined) return { filterHash };
  const decoded = decodeCursor(cursor);
  if (!decoded || decoded.f !== filterHash) {
    throw new InvalidRequestError([
      {
        field,
        message: `is not a next_cursor of this ${what}; send the same filters with it`,
        rule: "cursor",
      },
    ]);
  }
  return { after: { createdAt: new Date(decoded.t), id: decoded.i }, filterHash };
}

/** A page from the `limit + 1` rows the store found: the extra row only says that more follow. */
export function pageOf<R extends Keyset, V>(
  found: R[],
  limit: number,
  filterHash: string,
  view: (row: R) => V,
): Page<V> {
  const rows = found.slice(0, limit);
  const last = rows[rows.length - 1];
  const hasMore = found.length > limit && last !== undefined;
  return {
    data: rows.map(view),
    has_more: hasMore,
    next_cursor:
      hasMore && last ? encodeCursor({ t: last.createdAt.toISOString(), i: last.id, f: filterHash }) : null,
  };
}

/** A date-time the schema let through but the calendar does not know (`…T23:59:60Z`) is a 400, not a dropped filter. */
export function parseInstant(text: string | undefined, field: string): Date | undefined {
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
    if (value.i.includes("\u0000")) return null; // no id holds NUL; Postgres text cannot
    return value as Cursor;
  } catch {
    return null;
  }
}
