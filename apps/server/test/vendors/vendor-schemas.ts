/**
 * The vendors' published input schemas, as copied into the repository for tests: one file per
 * model, `<root>/<vendor>/<model id with "/" replaced by "__">.input.json`, the layout of the shared
 * vendor-schema collection and of the catalog example's `vendors/` folder.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JsonSchema } from "./input-schema.js";

export type SchemaVendor = "fal" | "replicate";

/** The copies these tests use (test/vendors/schemas). */
export const TEST_SCHEMAS_DIR = join(dirname(fileURLToPath(import.meta.url)), "schemas");

/** Where a model's input schema is under `root`. */
export function vendorSchemaFile(vendor: SchemaVendor, modelId: string, root = TEST_SCHEMAS_DIR): string {
  return join(root, vendor, `${modelId.replaceAll("/", "__")}.input.json`);
}

/** A model's input schema, read afresh (callers may hand it to a server that keeps it). */
export function vendorInputSchema(
  vendor: SchemaVendor,
  modelId: string,
  root = TEST_SCHEMAS_DIR,
): JsonSchema {
  const file = vendorSchemaFile(vendor, modelId, root);
  if (!existsSync(file)) {
    throw new Error(
      `No ${vendor} input schema for ${modelId} at ${file}: copy it verbatim from the shared vendor-schema collection and list it in that folder's README.md.`,
    );
  }
  return JSON.parse(readFileSync(file, "utf8")) as JsonSchema;
}
