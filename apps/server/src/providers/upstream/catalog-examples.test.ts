/**
 * The example catalog (docs/examples/catalog) holds what it says: every documented sample is a
 * valid input of its model, every route maps it to an input its vendor's published schema takes
 * (and, where the sample says, to exactly that input), an input beyond a vendor's limit is refused
 * naming the vendor's field, and every route's `output` finds the video in a vendor output.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type CompiledExpression, compileExpression } from "./mapping.js";
import { loadVendorSchema, type VendorSchema, vendorSchemaFrom } from "./vendor-schema.js";

const DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../../docs/examples/catalog");

interface Route {
  name?: string;
  provider: string;
  model?: string;
  map?: string;
  output?: string;
  vendor_schema?: string;
}
interface Model {
  input_schema: string | object;
  routes: Route[];
}
interface Catalog {
  providers: Record<string, { type: string }>;
  models: Record<string, Model>;
}
interface Samples {
  model: string;
  samples: {
    name: string;
    source: string;
    input: Record<string, unknown>;
    vendor_input?: Record<string, unknown>;
  }[];
  outputs: Record<string, unknown>;
}

const catalog = parseYaml(readFileSync(join(DIR, "catalog.yaml"), "utf8")) as Catalog;
const samplesFiles = readdirSync(join(DIR, "samples")).map(
  (file) => JSON.parse(readFileSync(join(DIR, "samples", file), "utf8")) as Samples,
);
const readJson = (path: string): object => JSON.parse(readFileSync(join(DIR, path), "utf8"));

/** Our input schema as submit applies it: every problem, defaults filled in. */
function ourSchema(model: Model) {
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validate = ajv.compile(
    typeof model.input_schema === "string" ? readJson(model.input_schema) : model.input_schema,
  );
  return (input: unknown) => {
    const filled = structuredClone(input);
    const valid = validate(filled);
    return { valid, filled, errors: validate.errors ?? [] };
  };
}

interface LoadedRoute {
  name: string;
  map: CompiledExpression | undefined;
  output: CompiledExpression;
  vendor: VendorSchema;
  vendorOutput: VendorSchema;
}

function loadRoute(slug: string, route: Route, i: number): LoadedRoute {
  const where = `catalog.yaml: models.${slug}.routes[${i}]`;
  if (!catalog.providers[route.provider]) throw new Error(`${where}: no provider ${route.provider}`);
  if (!route.vendor_schema) throw new Error(`${where}: an example route names its vendor_schema`);
  if (!route.output) throw new Error(`${where}: an example route names its output`);
  return {
    name: route.name ?? route.provider,
    map: route.map === undefined ? undefined : compileExpression(route.map, `${where}.map`),
    output: compileExpression(route.output, `${where}.output`),
    vendor: loadVendorSchema(join(DIR, route.vendor_schema), `${where}.vendor_schema`),
    vendorOutput: vendorSchemaFrom(
      readJson(route.vendor_schema.replace(/\.input\.json$/, ".output.json")),
      route.vendor_schema,
    ),
  };
}

/** What the route sends for our input (defaults filled in): without `map`, the input as it is. */
async function mapped(route: LoadedRoute, filled: unknown): Promise<unknown> {
  return route.map ? route.map.evaluate(filled) : filled;
}

const models = Object.entries(catalog.models);

describe("the example catalog", () => {
  it("publishes at least three models, each with samples", () => {
    expect(models.length).toBeGreaterThanOrEqual(3);
    expect(samplesFiles.map((s) => s.model).sort()).toEqual(models.map(([slug]) => slug).sort());
  });
});

describe.each(models)("%s", (slug, model) => {
  const check = ourSchema(model);
  const routes = model.routes.map((route, i) => loadRoute(slug, route, i));
  const { samples, outputs } = samplesFiles.find((s) => s.model === slug) as Samples;

  it.each(samples.map((s) => [s.name, s] as const))("sample %s is a valid input", (_name, sample) => {
    const { valid, errors } = check(sample.input);
    expect(errors).toEqual([]);
    expect(valid).toBe(true);
  });

  describe.each(routes.map((r) => [r.name, r] as const))("route %s", (_routeName, route) => {
    it.each(samples.map((s) => [s.name, s] as const))(
      "sends sample %s as the vendor's schema takes it",
      async (_name, sample) => {
        const vendorInput = await mapped(route, check(sample.input).filled);
        expect(route.vendor.check(vendorInput)).toEqual([]);
        const expected = sample.vendor_input?.[route.name];
        if (expected !== undefined) expect(vendorInput).toEqual(expected);
      },
    );

    it("finds the video's URL in the vendor's output", async () => {
      const output = outputs[route.name];
      expect(route.vendorOutput.check(output)).toEqual([]);
      const url = await route.output.evaluate(output);
      expect(typeof url).toBe("string");
      expect(new URL(url as string).protocol).toBe("https:");
    });
  });

  it("names only its own routes in its samples", () => {
    const names = routes.map((r) => r.name);
    for (const sample of samples) {
      for (const name of Object.keys(sample.vendor_input ?? {})) expect(names).toContain(name);
    }
    expect(Object.keys(outputs).sort()).toEqual([...names].sort());
  });
});

const images = (n: number) =>
  Array.from({ length: n }, (_, i) => `https://example.com/refs/image${i + 1}.png`);

/**
 * An input beyond a vendor's limit: our schema refuses it already, and so, should ours ever be
 * looser, does the route's vendor schema, naming the vendor's field and its limit.
 */
const beyondLimits: [
  string,
  { model: string; route: string; input: object; field: string; message: string },
][] = [
  [
    "fal Seedance: 10 images where fal takes 9",
    {
      model: "bytedance/seedance-2.0/reference-to-video",
      route: "fal-seedance",
      input: { prompt: "@Image10 runs", image_urls: images(10) },
      field: "image_urls",
      message: "has 10 items; at most 9",
    },
  ],
  [
    "Replicate Seedance: 20 s where Replicate takes 15",
    {
      model: "bytedance/seedance-2.0/reference-to-video",
      route: "replicate-seedance",
      input: { prompt: "a long take", duration: "20" },
      field: "duration",
      message: "must be at most 15",
    },
  ],
  [
    "fal Kling O1: 12 s where fal takes 3 to 10",
    {
      model: "kwaivgi/kling-o1/reference-to-video",
      route: "fal-kling-o1",
      input: { prompt: "@Image1 waves", image_urls: images(1), duration: "12" },
      field: "duration",
      message: "must be one of 3, 4, 5, 6, 7, 8, 9, 10",
    },
  ],
  [
    "fal Kling O1: an element whose front view is not among the images",
    {
      model: "kwaivgi/kling-o1/reference-to-video",
      route: "fal-kling-o1",
      input: { prompt: "@Image1 waves", image_urls: images(2), elements: [{ frontal: 8, references: [2] }] },
      field: "elements[0].frontal_image_url",
      message: "is required",
    },
  ],
  [
    "fal Veo 3.1: a square video where fal makes 16:9 or 9:16",
    {
      model: "google/veo-3.1/reference-to-video",
      route: "fal-veo-3.1",
      input: { prompt: "a sculpture", image_urls: images(1), aspect_ratio: "1:1" },
      field: "aspect_ratio",
      message: "must be one of 16:9, 9:16",
    },
  ],
  [
    "fal Veo 3.1: 6 s where fal makes 8",
    {
      model: "google/veo-3.1/reference-to-video",
      route: "fal-veo-3.1",
      input: { prompt: "a sculpture", image_urls: images(1), duration: "6" },
      field: "duration",
      message: "must be 8s",
    },
  ],
];

describe("an input beyond a vendor's limit", () => {
  it.each(beyondLimits)("%s", async (_name, { model: slug, route: routeName, input, field, message }) => {
    const model = catalog.models[slug] as Model;
    const check = ourSchema(model);
    expect(check(input).valid).toBe(false);
    const i = model.routes.findIndex((r) => (r.name ?? r.provider) === routeName);
    const route = loadRoute(slug, model.routes[i] as Route, i);
    // Defaults filled in as submit would, though our schema refused the input.
    const vendorInput = await mapped(route, check(input).filled);
    expect(route.vendor.check(vendorInput)).toContainEqual(expect.objectContaining({ field, message }));
  });

  it("covers every model", () => {
    expect(new Set(beyondLimits.map(([, c]) => c.model))).toEqual(new Set(models.map(([slug]) => slug)));
  });
});
