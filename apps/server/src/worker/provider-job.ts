/**
 * What one route's provider is handed for a run: the references downloaded and checked by the
 * media preflight when the provider reads them (uploads read from the blob store), on a download
 * slot rather than the run's generation slot (`slots.ts`), and the input, whose upload URLs
 * become signed URLs for a vendor, which fetches references itself.
 */
import type { ModelDefinition, NormalizedRequest } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import { routeInput } from "../catalog/route-check.js";
import type { ProviderRoute } from "../catalog/routes.js";
import type { AppDeps } from "../deps.js";
import { openUploadForRun, vendorReadableInput } from "../files/upload-urls.js";
import { KINDS } from "../media/limits.js";
import { preflight } from "../media/preflight.js";
import { ProviderError, type ProviderJob } from "../providers/types.js";
import type { DownloadGate } from "./slots.js";

/** Without a worker counting slots (a lone attempt), references download where the run is. */
const inPlace: DownloadGate = (download) => download();

export async function providerJob(
  deps: AppDeps,
  run: RunRecord,
  route: ProviderRoute,
  {
    model,
    request,
    workDir,
    signal,
    downloads = inPlace,
  }: {
    model: ModelDefinition;
    request: NormalizedRequest;
    workDir: string;
    signal: AbortSignal;
    downloads?: DownloadGate | undefined;
  },
): Promise<ProviderJob> {
  const download = () =>
    preflight(model, request, {
      workDir,
      allowLocal: deps.config.allowLocalUrls,
      minRate: deps.config.minDownloadRate,
      signal,
      openUpload: (url) => openUploadForRun(deps, run, url),
    });
  const references = !route.provider.usesReferences
    ? []
    : KINDS.some((kind) => request.references[kind].length > 0)
      ? await downloads(download)
      : await download();
  const readable = route.vendor ? vendorReadableInput(deps, model, run.input) : run.input;
  const input = await routeInput(route, readable);
  if (!input || typeof input !== "object" || Array.isArray(input)) {
    throw new ProviderError(`Route ${route.name}'s map did not give an object for the vendor's input.`);
  }
  return {
    runId: run.id,
    request,
    input: input as Record<string, unknown>,
    workDir,
    references,
    maxDurationSeconds: model.maxDurationSeconds,
  };
}
