/**
 * Submit's check of the uploads a run names as references (see `files/upload-urls.ts`): each
 * must be one the caller's organization and environment may use now.
 */
import { type Environment, type ModelDefinition, NotFoundError } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import { uploadIdOf, uploadProblem } from "../files/upload-urls.js";

type ReferenceModel = Pick<ModelDefinition, "referenceFields">;

/** Each reference field of the model's input with the URLs given in it, as `[path, url]`. */
function referenceUrls(model: ReferenceModel, input: Record<string, unknown>): [string, string][] {
  const found: [string, string][] = [];
  for (const field of Object.values(model.referenceFields)) {
    const value = input[field];
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
  model: ReferenceModel,
  input: Record<string, unknown>,
): Promise<void> {
  const now = deps.clock.now();
  for (const [field, url] of referenceUrls(model, input)) {
    const id = uploadIdOf(url, deps.config.publicUrl);
    if (!id) continue;
    const upload = await deps.store.getUpload({ ...caller, id });
    const problem = uploadProblem(upload, now);
    if (problem) throw new NotFoundError("file_not_found", `${field}: upload ${id} ${problem}.`);
  }
}
