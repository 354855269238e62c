/**
 * `@refvid/api-types/document`: the bundled OpenAPI document, read from disk. Node only (it uses
 * `node:fs`), which is why it is not part of the main entry, whose types and constants also run
 * in browsers and edge runtimes.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Absolute path of the bundled OpenAPI 3.1 document (JSON). Works from src/ and dist/ alike. */
export const openapiDocumentPath: string = fileURLToPath(
  new URL("../src/generated/openapi.json", import.meta.url),
);

/**
 * A fresh, mutable copy of the bundled OpenAPI document. Each call parses the file again, so
 * a consumer that mutates it (as express-openapi-validator does) cannot affect another.
 */
export function loadOpenapiDocument(): Record<string, unknown> & {
  paths: Record<string, unknown>;
  components: Record<string, Record<string, unknown>>;
} {
  return JSON.parse(readFileSync(openapiDocumentPath, "utf8"));
}
