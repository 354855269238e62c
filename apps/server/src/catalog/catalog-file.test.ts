import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogError, type CatalogFile, loadCatalogFile, parseCatalogFile } from "./catalog-file.js";

const VARIABLE = "REFVID_PROVIDERS_FILE";
const loadRouting = (file: string, environment: Record<string, string>): CatalogFile =>
  loadCatalogFile({ file, variable: VARIABLE, env: environment });

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-routing-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const env = { FAL_KEY: "fal-secret-1", REPLICATE_API_TOKEN: "r8_secret_2" };

const EXAMPLE = `
providers:
  fal-main:   { type: fal, url: https://queue.fal.run, token_env: FAL_KEY, max_concurrency: 10 }
  replicate:  { type: replicate, token_env: REPLICATE_API_TOKEN }
  gpu-box-1:  { type: cog, url: http://10.0.0.5:5000, max_concurrency: 1 }
  preview:    { type: preview }
routes:
  lab-a/model-a/reference-to-video:
    - { provider: fal-main, model: "fal-ai/some-model/reference-to-video" }
    - { provider: replicate, model: "owner/name", rename: { image_urls: images }, input: { fps: 24 } }   # fallback
  lab-b/model-b/reference-to-video:
    - { provider: gpu-box-1, only: [prompt, duration], as_number: [duration] }
  lab-d/model-d/reference-to-video:
    - { provider: gpu-box-1 }
`;

function errorOf(raw: unknown, environment: Record<string, string> = env): string {
  try {
    parseCatalogFile(raw, { file: "providers.yaml", variable: VARIABLE, env: environment });
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return (err as Error).message;
  }
  throw new Error("expected a CatalogError");
}

describe("the routing file", () => {
  it("reads the documented example (YAML), with default URLs and credentials from the environment", async () => {
    const file = join(dir, "providers.yaml");
    await writeFile(file, EXAMPLE);
    const routing = loadRouting(file, env);
    expect(routing.providers.map((p) => [p.name, p.type, p.url, p.token, p.maxConcurrency])).toEqual([
      ["fal-main", "fal", "https://queue.fal.run", "fal-secret-1", 10],
      ["replicate", "replicate", "https://api.replicate.com", "r8_secret_2", undefined],
      ["gpu-box-1", "cog", "http://10.0.0.5:5000", null, 1],
      ["preview", "preview", undefined, null, undefined],
    ]);
    const a = routing.routes["lab-a/model-a/reference-to-video"] ?? [];
    expect(a.map((r) => [r.provider.name, r.model])).toEqual([
      ["fal-main", "fal-ai/some-model/reference-to-video"],
      ["replicate", "owner/name"],
    ]);
    expect(a[1]).toMatchObject({ rename: { image_urls: "images" }, input: { fps: 24 } });
    expect(routing.routes["lab-d/model-d/reference-to-video"]?.[0]?.provider.name).toBe("gpu-box-1");
    expect(routing.routes["lab-b/model-b/reference-to-video"]?.[0]).toMatchObject({
      only: ["prompt", "duration"],
      asNumber: ["duration"],
    });
    expect(routing.routes["lab-c/model-c/reference-to-video"]).toBeUndefined();
  });

  it("reads JSON too", async () => {
    const file = join(dir, "providers.json");
    await writeFile(file, JSON.stringify({ providers: { p: { type: "preview" } }, routes: {} }));
    expect(loadRouting(file, env).providers).toEqual([{ name: "p", type: "preview", token: null }]);
  });

  it("names the path inside the file of every problem", () => {
    const message = errorOf({
      providers: {
        a: { type: "fal", token_env: "FAL_KEY", max_concurrency: 0 },
        b: { type: "replicat", token_env: "X" },
        c: { type: "cog" },
        d: { type: "preview", token_env: "FAL_KEY" },
      },
      routes: { "lab-a/model-a/reference-to-video": [] },
    });
    expect(message).toContain("providers.yaml is not valid");
    expect(message).toMatch(/providers\.a\.max_concurrency: /);
    expect(message).toMatch(
      /providers\.b\.type: type must be one of fal, replicate, cog, preview, simulated/,
    );
    expect(message).toMatch(/providers\.c\.url: /);
    expect(message).toMatch(/providers\.d: unknown field token_env/);
    expect(message).toMatch(/routes\.lab-a\/model-a\/reference-to-video: must list at least one route/);
  });

  it("refuses routes to unknown providers or models, a vendor route without a model, and an unset credential", () => {
    const message = errorOf(
      {
        providers: {
          fal: { type: "fal", token_env: "MISSING_KEY" },
          gpu: { type: "cog", url: "http://10.0.0.5:5000" },
        },
        routes: {
          "lab-a/model-a/reference-to-video": [{ provider: "fal" }, { provider: "nope" }],
          "lab-z/model-z/reference-to-video": [{ provider: "gpu" }],
        },
      },
      {},
    );
    expect(message).toContain("providers.fal.token_env: the environment variable MISSING_KEY is not set");
    expect(message).toContain(
      "routes.lab-a/model-a/reference-to-video[0].model: required for a fal provider",
    );
    expect(message).toContain(
      'routes.lab-a/model-a/reference-to-video[1].provider: no provider "nope" (providers: fal, gpu)',
    );
    expect(message).toMatch(/routes\.lab-z\/model-z\/reference-to-video: not a model \(models: lab-a/);
  });

  it("never shows a credential, and says what is wrong with a file it cannot read", async () => {
    const message = errorOf({ providers: { a: { type: "fal", token_env: "FAL_KEY", url: "ftp://x" } } });
    expect(message).toContain("providers.a.url: must be an http or https URL");
    expect(message).not.toContain("fal-secret-1");
    expect(() => loadRouting(join(dir, "missing.yaml"), env)).toThrow(/cannot read .*missing\.yaml/);
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "providers: [unclosed");
    expect(() => loadRouting(bad, env)).toThrow(/bad\.yaml is not valid YAML/);
  });
});

describe("the catalog file", () => {
  const parse = (raw: unknown, environment: Record<string, string> = env): CatalogFile =>
    parseCatalogFile(raw, { file: "catalog.yaml", variable: "REFVID_CATALOG_FILE", env: environment });
  const refusal = (raw: unknown): string => {
    try {
      parse(raw);
    } catch (err) {
      expect(err).toBeInstanceOf(CatalogError);
      return (err as Error).message;
    }
    throw new Error("expected a CatalogError");
  };
  const SLUG = "acme/video-1/reference-to-video";
  const model = (over: Record<string, unknown> = {}) => ({
    name: "Video 1",
    summary: "One image, 5 or 10 s.",
    input_schema: {
      type: "object",
      required: ["prompt"],
      properties: {
        prompt: { type: "string" },
        image_urls: { type: "array", items: { type: "string" } },
        duration: { type: "string", enum: ["5", "10"], default: "5" },
        resolution: { type: "string", enum: ["480p", "720p"], default: "720p" },
      },
    },
    fields: { prompt: "prompt", duration: "duration", resolution: "resolution" },
    max_duration_seconds: 10,
    references: { image: { field: "image_urls", formats: ["jpeg", "png"] } },
    pricing: [
      { when: { resolution: "480p" }, usd_per_second: "0.10" },
      { when: { resolution: "720p" }, usd_per_second: "0.20" },
    ],
    routes: [{ provider: "fal", model: "acme/video-1", cost: { usd_per_second: "0.15" } }],
    ...over,
  });
  const file = (over: Record<string, unknown> = {}, top: Record<string, unknown> = {}) => ({
    providers: { fal: { type: "fal", token_env: "FAL_KEY" } },
    models: { [SLUG]: model(over) },
    ...top,
  });

  it("adds a model: its definition, prices, routes, and the input read with its fields", () => {
    const catalog = parse(file());
    const [added] = catalog.models;
    expect(added?.model).toMatchObject({
      slug: SLUG,
      name: "Video 1",
      maxDurationSeconds: 10,
      referenceFields: { image: "image_urls" },
      media: { image: { formats: ["jpeg", "png"] } },
      priceTable: [
        { tier: "480p", when: { resolution: "480p" }, unit: "second", unitPrice: 100_000 },
        { tier: "720p", when: { resolution: "720p" }, unit: "second", unitPrice: 200_000 },
      ],
    });
    const checked = added?.input.check({ prompt: "p", image_urls: ["https://example.com/a.png"] });
    expect(checked?.problems).toEqual([]);
    expect(added?.model.normalize(checked?.input)).toMatchObject({
      prompt: "p",
      duration: 5,
      resolution: "720p",
      references: { image: ["https://example.com/a.png"], video: [], audio: [] },
    });
    expect(catalog.routes[SLUG]?.[0]).toMatchObject({
      name: "fal",
      cost: [{ when: {}, unit: "second", unitPrice: 150_000 }],
    });
  });

  it("reports a route that costs more than the price, and whether it may", () => {
    const catalog = parse(
      file({ routes: [{ provider: "fal", model: "m", cost: { usd_per_second: "0.15" } }] }),
    );
    expect(catalog.losses).toEqual([
      {
        slug: SLUG,
        route: "fal",
        tier: "480p",
        price: { unit: "second", unitPrice: 100_000 },
        cost: { unit: "second", unitPrice: 150_000 },
        seconds: null,
        allowed: false,
      },
    ]);
    const allowed = parse(
      file({ routes: [{ provider: "fal", model: "m", cost: { usd_per_second: "0.15" }, allow_loss: true }] }),
    );
    expect(allowed.losses[0]?.allowed).toBe(true);
  });

  it("re-prices a built-in model's existing tiers only", () => {
    const catalog = parse({
      models: {
        "lab-d/model-d/reference-to-video": {
          pricing: [{ when: { resolution: "720p" }, usd_per_second: "0.09" }],
        },
      },
    });
    expect(catalog.prices["lab-d/model-d/reference-to-video"]).toEqual([
      { tier: "720p", when: { resolution: "720p" }, unit: "second", unitPrice: 90_000 },
      { tier: "1080p", when: { resolution: "1080p" }, unit: "second", unitPrice: 106_000 },
    ]);
  });

  it.each<[string, unknown, string]>([
    [
      "a slug that is not lab/model/category",
      { models: { "acme/video": model() } },
      "models.acme/video: a model slug is <lab>/<model>/<category>",
    ],
    [
      "a category refvid does not know",
      { models: { "acme/v/audio-to-video": model() } },
      "models.acme/v/audio-to-video: a model slug",
    ],
    [
      "a price that is not an amount",
      file({ pricing: [{ usd_per_second: "ten" }] }),
      `models.${SLUG}.pricing[0].usd_per_second: must be an amount of USD`,
    ],
    ["no price", file({ pricing: [] }), `models.${SLUG}.pricing: must list at least one price`],
    [
      "a field the schema does not have",
      file({ fields: { prompt: "text" } }),
      `models.${SLUG}.fields.prompt: "text" is not a property of the input schema`,
    ],
    [
      "a format refvid cannot read",
      file({ references: { image: { field: "image_urls", formats: ["svg"] } } }),
      `models.${SLUG}.references.image.formats[0]: not a image format refvid reads`,
    ],
    [
      "an input schema file that is not there",
      file({ input_schema: "missing.json" }),
      `models.${SLUG}.input_schema: cannot read`,
    ],
    [
      "an input schema that does not compile",
      file({ input_schema: { type: "nonsense" } }),
      `models.${SLUG}.input_schema: is not a JSON Schema`,
    ],
    [
      "a map that is not JSONata",
      file({ routes: [{ provider: "fal", model: "m", map: "{ prompt: " }] }),
      `models.${SLUG}.routes[0].map: `,
    ],
    [
      "a map beside renames",
      file({ routes: [{ provider: "fal", model: "m", map: "$", rename: { a: "b" } }] }),
      `models.${SLUG}.routes[0].map: give either map or rename, not both`,
    ],
    [
      "a vendor schema file that is not there",
      file({ routes: [{ provider: "fal", model: "m", vendor_schema: "nowhere.json" }] }),
      `models.${SLUG}.routes[0].vendor_schema: vendor schema`,
    ],
    [
      "two routes of one name",
      file({
        routes: [
          { provider: "fal", model: "a" },
          { provider: "fal", model: "b" },
        ],
      }),
      `models.${SLUG}.routes[1].name: another route of this model is named "fal"`,
    ],
    [
      "a cost in the wrong form",
      file({ routes: [{ provider: "fal", model: "m", cost: 0.3 }] }),
      `models.${SLUG}.routes[0].cost: must be { usd_per_second`,
    ],
    ["an unknown field of a model", file({ colour: "red" }), `models.${SLUG}: unknown field colour`],
    [
      "a built-in model's schema",
      { models: { "lab-a/model-a/reference-to-video": { input_schema: {} } } },
      "models.lab-a/model-a/reference-to-video: unknown field input_schema",
    ],
    [
      "a built-in tier that does not exist",
      {
        models: {
          "lab-d/model-d/reference-to-video": {
            pricing: [{ when: { resolution: "4k" }, usd_per_second: "1" }],
          },
        },
      },
      "models.lab-d/model-d/reference-to-video.pricing[0].when: model-d has no such tier",
    ],
    [
      "routes given twice",
      file({}, { routes: { [SLUG]: [{ provider: "fal", model: "m" }] } }),
      `routes.${SLUG}: routes for ${SLUG} are given twice`,
    ],
  ])("refuses %s, naming the path inside the file", (_name, raw, message) => {
    const text = refusal(raw);
    expect(text).toContain("REFVID_CATALOG_FILE: catalog.yaml is not valid:");
    expect(text).toContain(message);
  });

  it("reads the example catalog, with no route at a loss", () => {
    const example = join(__dirname, "../../../../docs/examples/catalog/catalog.yaml");
    const catalog = loadCatalogFile({ file: example, variable: "REFVID_CATALOG_FILE", env });
    expect(catalog.models.map(({ model }) => model.slug)).toEqual([
      "bytedance/seedance-2.0/reference-to-video",
      "kwaivgi/kling-o1/reference-to-video",
      "google/veo-3.1/reference-to-video",
    ]);
    expect(catalog.losses).toEqual([]);
  });
});
