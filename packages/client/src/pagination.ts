/**
 * Cursor pagination over `POST /v1/runs/search`: each page's `next_cursor` is sent back as
 * `cursor` with the same filters, until `has_more` is false.
 */
import type { Run, RunPage, SearchRunsRequest } from "@refvid/api-types";

/** Search filters: the search request without `cursor`, which pagination manages. */
export type RunFilters = Omit<SearchRunsRequest, "cursor">;

/** Options for walking search results. */
export interface PaginationOptions {
  /** Aborting it stops the walk; the pending request rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Each page request's timeout (each attempt's, as the client's `timeoutMs`); `0` for none. */
  timeoutMs?: number;
}

/** A function that fetches one page of search results. */
export type SearchPage = (request: SearchRunsRequest, options: PaginationOptions) => Promise<RunPage>;

/**
 * Yields each page of runs matching `filters`, newest first. Pages are fetched lazily, one per
 * iteration, so breaking out of the loop stops further requests.
 */
export async function* iterateRunPages(
  search: SearchPage,
  filters: RunFilters = {},
  options: PaginationOptions = {},
): AsyncGenerator<RunPage, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const request: SearchRunsRequest = cursor === undefined ? { ...filters } : { ...filters, cursor };
    const page = await search(request, options);
    yield page;
    if (!page.has_more || page.next_cursor === null) return;
    // A server that hands back the cursor it was given would make this loop forever.
    if (page.next_cursor === cursor) {
      throw new Error(`search returned the same cursor twice (${cursor}); stopping to avoid an endless loop`);
    }
    cursor = page.next_cursor;
  }
}

/** Yields each run matching `filters`, newest first, across as many pages as it takes. */
export async function* iterateRuns(
  search: SearchPage,
  filters: RunFilters = {},
  options: PaginationOptions = {},
): AsyncGenerator<Run, void, undefined> {
  for await (const page of iterateRunPages(search, filters, options)) {
    yield* page.data;
  }
}

/** Every run matching `filters`, in one array. Prefer {@link iterateRuns} when there may be many. */
export async function collectRuns(
  search: SearchPage,
  filters: RunFilters = {},
  options: PaginationOptions = {},
): Promise<Run[]> {
  const runs: Run[] = [];
  for await (const run of iterateRuns(search, filters, options)) runs.push(run);
  return runs;
}
