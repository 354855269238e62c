/** Routes of the model catalog: every model, and one model by its slug. */
import type { Router } from "express";
import { modelCatalog } from "../../services/models.js";

/** `GET /v1/models` and `GET /v1/models/{lab}/{model}/{category}`. */
export function modelsRoutes(router: Router): void {
  const models = modelCatalog();

  router.get("/v1/models", (_req, res) => {
    res.json(models.list());
  });

  router.get("/v1/models/:lab/:model/:category", (req, res) => {
    res.json(models.get(`${req.params.lab}/${req.params.model}/${req.params.category}`));
  });
}
