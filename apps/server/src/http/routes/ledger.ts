/** `GET /v1/ledger`: the caller's organization's ledger. */
import type { Router } from "express";
import type { AppDeps } from "../../deps.js";
import { listLedger } from "../../services/admin-money.js";
import { callerOf } from "../auth.js";
import { ledgerQuery } from "../query-text.js";

export function ledgerRoutes(router: Router, deps: AppDeps): void {
  router.get("/v1/ledger", async (req, res) => {
    res.json(await listLedger(deps, callerOf(res).organization.id, ledgerQuery(req)));
  });
}
