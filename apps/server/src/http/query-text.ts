/** Reading a query parameter the OpenAPI validator has already checked. */
import type { Request } from "express";

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
