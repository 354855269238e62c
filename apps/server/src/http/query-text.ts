/** Reading query parameters the OpenAPI validator has already checked. */
import type { Request } from "express";
import type { PageQuery } from "../services/admin-lists.js";
import type { LedgerQuery } from "../services/admin-money.js";

/**
 * One query parameter as sent. The OpenAPI validator has already checked each against the spec
 * (`revoked` is `true` or `false`, `group_by` one of its values, `limit` an integer in range).
 */
export function queryText(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === "string"
    ? value
    : typeof value === "boolean" || typeof value === "number"
      ? String(value)
      : undefined;
}

/** A page's `limit` and `cursor`. */
export function pageQuery(req: Request): PageQuery {
  const limit = queryText(req, "limit");
  return { limit: limit === undefined ? undefined : Number(limit), cursor: queryText(req, "cursor") };
}

/** A ledger listing's filters; `kind=a,b` comes split into an array by the validator. */
export function ledgerQuery(req: Request): LedgerQuery {
  const kind = req.query.kind;
  return {
    ...pageQuery(req),
    kind: Array.isArray(kind) ? kind.map(String) : queryText(req, "kind"),
    apiKeyId: queryText(req, "api_key_id"),
    runId: queryText(req, "run_id"),
    from: queryText(req, "from"),
    to: queryText(req, "to"),
  };
}
