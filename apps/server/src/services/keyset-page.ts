/**
 * Keyset pages, newest first by `(created_at, id)`: the opaque cursor a page hands out and takes
 * back. A cursor carries the last row's keyset, signed with the listing and the filters it was
 * made with (`PageCursors`), so it only continues the same listing; any other is a 400 naming it.
 */
import { InvalidRequestError } from "@refvid/core";
import type { Keyset } from "@refvid/store";
import type { PageCursors } from "../page-cursors.js";

export interface Page<V> {
  data: V[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Which listing a cursor is for, and where it is sent. */
export interface PageRequest {
  /** The listing, as the 400 names it: "run search", "organization list"… */
  listing: string;
  cursor: string | undefined;
  /** Everything that selects the rows: a cursor continues these filters only. */
  filters: unknown;
  /** The cursor's field, as a 400 names it: `body.cursor` or `query.cursor`. */
  field: string;
}

export interface PageStart {
  /** The keyset the page starts after; none for a first page. */
  after?: Keyset;
  /** The cursor of the page after `last`. */
  cursorAfter(last: Keyset): string;
}

/** Where a page starts: after the cursor's row (none for a first page), for these filters only. */
export function pageStart(cursors: PageCursors, request: PageRequest): PageStart {
  const scope = `${request.listing}\0${JSON.stringify(request.filters)}`;
  const cursorAfter = (last: Keyset) => cursors.sign(scope, last);
  if (request.cursor === undefined) return { cursorAfter };
  const after = cursors.open(scope, request.cursor);
  if (!after) {
    throw new InvalidRequestError([
      {
        field: request.field,
        message: `is not a next_cursor of this ${request.listing}; send it as given, with the same filters`,
        rule: "cursor",
      },
    ]);
  }
  return { after, cursorAfter };
}

/** A page from the `limit + 1` rows the store found: the extra row only says that more follow. */
export function pageOf<R extends Keyset, V>(
  found: R[],
  limit: number,
  start: PageStart,
  view: (row: R) => V,
): Page<V> {
  const rows = found.slice(0, limit);
  const last = rows[rows.length - 1];
  const hasMore = found.length > limit && last !== undefined;
  return {
    data: rows.map(view),
    has_more: hasMore,
    next_cursor: hasMore && last ? start.cursorAfter(last) : null,
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
