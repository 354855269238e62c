/**
 * Submit's check of the uploads a run names as references (see `files/upload-urls.ts`): each
 * must be one the caller's organization and environment may use now.
 */
import { type Environment, MODELS, type ModelInput, type ModelSlug, NotFoundError } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import { uploadIdOf, uploadProblem } from "../files/upload-urls.js";

/** Each reference field of the model's input with the URLs given in it, as `[path, url]`. */
function referenceUrls(slug: ModelSlug, input: ModelInput): [string, string][] {
  const fields = Object.values(MODELS[slug].referenceFields);
  const found: [string, string][] = [];
  const values = input as Record<string, unknown>;
  for (const field of fields) {
    const value = values[field];
    if (Array.isArray(value)) {
      value.forEach((url, index) => {
        if (typeof url === "string") found.push([`body.input.${field}[${index}]`, url]);
      });
    }
  }
  return found;
}

/**
 * Refuses a submit naming an upload the caller may not use (another organization's or
 * environment's, unknown or expired): `404 file_not_found` naming the field.
 */
export async function checkUploadReferences(
  deps: AppDeps,
  caller: { organizationId: string; environment: Environment },
  slug: ModelSlug,
  input: ModelInput,
): Promise<void> {
  const now = deps.clock.now();
  for (const [field, url] of referenceUrls(slug, input)) {
    const id = uploadIdOf(url, deps.config.publicUrl);
    if (!id) continue;
    const upload = await deps.store.getUpload({ ...caller, id });
    const problem = uploadProblem(upload, now);
    if (problem) throw new NotFoundError("file_not_found", `${field}: upload ${id} ${problem}.`);
  }
}
