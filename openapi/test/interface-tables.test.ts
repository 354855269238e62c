import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkInterface, MODEL_INPUTS, RUN_STATUSES } from "./interface-tables.js";

const bundle = () => JSON.parse(readFileSync(new URL("../dist/openapi.json", import.meta.url), "utf8"));

describe("the bundled spec against the interface's tables", () => {
  it("matches every model input field, Run, Output and Account field, status and path", () => {
    expect(checkInterface(bundle())).toEqual([]);
  });

  it("lists the run statuses in the interface's order", () => {
    expect(bundle().components.schemas.RunStatus.enum).toEqual(RUN_STATUSES);
  });

  it("offers both auth forms", () => {
    const schemes = bundle().components.securitySchemes;
    expect(schemes.KeyAuth).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    expect(schemes.BearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });
});

// Each mutation breaks the bundle the way a careless spec edit would; the check must notice.
// biome-ignore lint/suspicious/noExplicitAny: mutations poke at arbitrary places of a parsed JSON document
const mutations: [string, (doc: any) => void, RegExp][] = [
  [
    "a dropped maxItems",
    (d) => delete d.components.schemas.ModelAInput.properties.image_urls.maxItems,
    /ModelAInput.image_urls: maxItems/,
  ],
  [
    "a changed default",
    (d) => (d.components.schemas.ModelBInput.properties.duration.default = 6),
    /ModelBInput.duration: default 6/,
  ],
  [
    "a missing enum value",
    (d) => d.components.schemas.ModelDInput.properties.duration.enum.pop(),
    /ModelDInput.duration: enum/,
  ],
  [
    "a mistyped field",
    (d) => (d.components.schemas.ModelCInput.properties.duration.type = "string"),
    /ModelCInput.duration: type string/,
  ],
  [
    "a missing field",
    (d) => delete d.components.schemas.ModelAInput.properties.bitrate_mode,
    /ModelAInput.bitrate_mode: missing/,
  ],
  [
    "an extra field",
    (d) => (d.components.schemas.ModelCInput.properties.image_url = { type: "string" }),
    /ModelCInput.image_url: not in the interface/,
  ],
  [
    "a field made optional",
    (d) => (d.components.schemas.ModelDInput.required = ["prompt"]),
    /ModelDInput.image_urls: must be required/,
  ],
  [
    "a Run field not nullable",
    (d) => (d.components.schemas.Run.properties.started_at.type = "string"),
    /Run.started_at: must allow null/,
  ],
  [
    "an Account field gone",
    (d) => delete d.components.schemas.Wallet.properties.reserved_usd,
    /Account.wallet.reserved_usd: missing/,
  ],
  ["a missing path", (d) => delete d.paths["/v1/account"], /GET \/v1\/account: missing/],
  [
    "a wrong success status",
    (d) => {
      const op = d.paths["/v1/runs/search"].post;
      op.responses["200"] = op.responses["201"];
      delete op.responses["201"];
    },
    /POST \/v1\/runs\/search: no 201/,
  ],
  [
    "the 429 code as a number",
    (d) =>
      (d.components.schemas.ConcurrencyLimitError.properties.error.properties.code = { type: "integer" }),
    /ConcurrencyLimitError.error.code: type integer/,
  ],
];

describe("the check catches spec drift", () => {
  it.each(mutations)("%s", (_name, mutate, want) => {
    const doc = bundle();
    mutate(doc);
    expect(checkInterface(doc).join("\n")).toMatch(want);
  });

  it("covers all four models", () => {
    expect(Object.keys(MODEL_INPUTS)).toEqual(["model-a", "model-b", "model-c", "model-d"]);
  });
});
