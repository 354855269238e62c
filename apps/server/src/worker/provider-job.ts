/**
 * What one route's provider is handed for a run: the references downloaded and checked by the
 * media preflight when the provider reads them (uploads read from the blob store), and the input,
 * whose upload URLs become signed URLs for a vendor, which fetches references itself.
 */
import type { ModelDefinition, NormalizedRequest } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { openUploadForRun, vendorReadableInput } from "../files/upload-urls.js";
import { preflight } from "../media/preflight.js";
import type { ProviderRoute } from "../providers/registry.js";
import type { ProviderJob } from "../providers/types.js";

export async function providerJob(
  deps: AppDeps,
  run: RunRecord,
  route: ProviderRoute,
  {
    model,
    request,
    workDir,
    signal,
  }: { model: ModelDefinition; request: NormalizedRequest; workDir: string; signal: AbortSignal },
): Promise<ProviderJob> {
  const references = route.provider.usesReferences
    ? await preflight(model, request, {
        workDir,
        allowLocal: deps.config.allowLocalUrls,
        signal,
        openUpload: (url) => openUploadForRun(deps, run, url),
      })
    : [];
  const input = route.vendor ? vendorReadableInput(deps, model, run.input) : run.input;
  return { runId: run.id, request, input, workDir, references, maxDurationSeconds: model.maxDurationSeconds };
}
