/** The account route: the caller's identity, wallet, concurrency and rate limit. */
import type { Router } from "express";
import type { AppDeps } from "../../deps.js";
import { getAccount } from "../../services/account.js";
import { callerOf } from "../auth.js";

/** `GET /v1/account`, with the rate limit the auth step left in `res.locals.rate`. */
export function accountRoutes(router: Router, deps: AppDeps): void {
  router.get("/v1/account", async (_req, res) => {
    res.json(await getAccount(deps, callerOf(res), res.locals.rate));
  });
}
