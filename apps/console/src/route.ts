/**
 * The console's pages as URL hashes, so each can be linked, reloaded and opened in a new tab:
 * `#/playground`, `#/runs`, `#/runs/<run_id>` (one run) and `#/account`.
 */

export type Route =
  | { page: "playground" }
  | { page: "runs"; runId: string | undefined }
  | { page: "account" };

/** The route a hash names; anything unknown is the playground, the console's first page. */
export function routeOf(hash: string): Route {
  const [page = "", id, ...rest] = hash.replace(/^#\/?/, "").split("?")[0]?.split("/") ?? [];
  if (page === "runs" && rest.length === 0) {
    return { page: "runs", runId: id ? decoded(id) : undefined };
  }
  if (page === "account" && id === undefined) return { page: "account" };
  return { page: "playground" };
}

/** A path segment unescaped; one with a broken escape as it stands. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The hash of one run's page. */
export const runHash = (runId: string): string => `#/runs/${encodeURIComponent(runId)}`;
