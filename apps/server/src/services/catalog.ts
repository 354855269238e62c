/**
 * Reloading the catalog file (`POST /admin/v1/catalog/reload`, `SIGHUP`): the file read again and
 * put in service whole, or refused with the message boot would give, the catalog in service kept.
 */
import { CatalogInvalidError } from "@refvid/core";
import { CatalogError } from "../catalog/catalog-file.js";
import type { AppDeps } from "../deps.js";

export interface CatalogReload {
  models: string[];
  reloaded_at: string;
}

export function reloadCatalog(deps: Pick<AppDeps, "catalog" | "clock" | "logger">): CatalogReload {
  try {
    const version = deps.catalog.reload();
    const models = version.catalog.slugs;
    deps.logger.info({ models }, "catalog reloaded");
    return { models, reloaded_at: deps.clock.now().toISOString() };
  } catch (err) {
    if (!(err instanceof CatalogError)) throw err;
    deps.logger.error({ err: err.message }, "catalog reload refused; the catalog in service stays");
    throw new CatalogInvalidError(err.message);
  }
}
