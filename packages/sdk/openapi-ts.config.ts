// Config for `npx openapi-ts` (the `gen` script), loaded by @hey-api/openapi-ts 0.95 through c12/jiti,
// so a TypeScript config works without a build step. Output is deterministic: no timestamps, no
// post-processors (Biome ignores src/generated/**).
import { fileURLToPath } from "node:url";
import { defineConfig } from "@hey-api/openapi-ts";

// The bundle is the single source of truth; resolve it through the package export so the path does
// not depend on the working directory.
const input = fileURLToPath(import.meta.resolve("@refvid/api-types/openapi.json"));

export default defineConfig({
  input,
  output: {
    path: "src/generated",
    clean: true,
    // hey-api's own first line, plus an explicit do-not-edit notice (also on the bundled client files).
    header: (ctx) => [
      ...ctx.defaultValue,
      "// DO NOT EDIT. Regenerate with `npm run gen -w @refvid/sdk` from @refvid/api-types/openapi.json.",
    ],
  },
  plugins: [
    { name: "@hey-api/client-fetch", bundle: true },
    {
      name: "@hey-api/typescript",
      // Every component schema's type is prefixed (`Run` becomes `ApiRun`, `Error` becomes
      // `ApiError`), so no type shadows a global (`Error`) or clashes with `@refvid/client`'s
      // exports (`Run`, `ValidationError`, ...). Operation types keep their names (`GetRunResponse`).
      definitions: "Api{{name}}",
    },
    // The zod schemas keep their `z{{name}}` names (`zRun`, `zError`): the `z` prefix already
    // keeps them apart from any type or class.
    { name: "zod", compatibilityVersion: 4 },
    {
      name: "@hey-api/sdk",
      // Requests are validated before they are sent. Responses are not: the schemas' enums
      // (`ModelSlug`, `RunStatus`) are closed, so validating responses would reject a run of a
      // model or in a status added after this SDK was generated. The response schemas stay
      // exported for opt-in checks.
      validator: { request: "zod", response: false },
    },
  ],
});
