/** The organization's usage route: JSON, or CSV for `Accept: text/csv`. */
import type { Router } from "express";
import type { AppDeps } from "../../deps.js";
import { type AccountUsageGroupBy, getAccountUsage } from "../../services/account-usage.js";
import { usageCsv } from "../../views/usage-csv.js";
import { callerOf } from "../auth.js";
import { queryText } from "../query-text.js";

/** `GET /v1/usage`: JSON unless the caller prefers CSV; anything else it accepts gets JSON too. */
export function usageRoutes(router: Router, deps: AppDeps): void {
  router.get("/v1/usage", async (req, res) => {
    const report = await getAccountUsage(deps, callerOf(res), {
      groupBy: queryText(req, "group_by") as AccountUsageGroupBy | undefined,
      from: queryText(req, "from"),
      to: queryText(req, "to"),
    });
    res.vary("Accept");
    if (req.accepts(["application/json", "text/csv"]) === "text/csv") {
      res.type("text/csv; charset=utf-8").send(usageCsv(report));
      return;
    }
    res.json(report);
  });
}
