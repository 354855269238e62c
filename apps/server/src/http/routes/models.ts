/** Routes of the model catalog: every model, and one model by its slug. */
import type { Router } from "express";
import type { AppDeps } from "../../deps.js";
import { getModel, listModels } from "../../services/models.js";

/** `GET /v1/models` and `GET /v1/models/{lab}/{model}/{category}`. */
export function modelsRoutes(router: Router, deps: AppDeps): void {
  router.get("/v1/models", (_req, res) => {
    res.json(listModels(deps));
  });

  router.get("/v1/models/:lab/:model/:category", (req, res) => {
    res.json(getModel(deps, `${req.params.lab}/${req.params.model}/${req.params.category}`));
  });
}
