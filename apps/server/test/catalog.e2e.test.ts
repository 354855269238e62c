/**
 * The operator's catalog end to end: the example catalog (docs/examples/catalog) served in front of
 * the project's fal, Replicate and Cog protocol servers, each checking what it receives against
 * the vendor's published input schema. Catalog models run through each vendor type with their
 * values mapped and their video found by the route's output path; an input no route takes is a
 * 400 that reaches no vendor; fallback skips a route whose schema refuses the input; admin usage
 * shows each run's vendor cost and margin; a reload changes prices for new runs only.
 */
import { readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { eventually, type Tenant, type TestRefvid } from "./harness.js";
import { OUTPUT_SECONDS, startVendorStack, type VendorStack, type Vendors } from "./vendor-stack.js";
import type { CogServer } from "./vendors/cog-server.js";
import type { FalServer } from "./vendors/fal-server.js";
import type { ReplicateServer } from "./vendors/replicate-server.js";
import { vendorInputSchema } from "./vendors/vendor-schemas.js";

const EXAMPLE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../docs/examples/catalog");
const VENDORS = join(EXAMPLE_DIR, "vendors");
const SEEDANCE = "bytedance/seedance-2.0/reference-to-video";
const FAL_SEEDANCE = "bytedance/seedance-2.0/reference-to-video";
const REPLICATE_MODEL = "bytedance/seedance-2.0";
const REPLICATE_VERSION = "d456b64a60da3903c3692f7128d491004d021bbc2e1e19c63bccb117d3f4ab7b";
const FALLBACK = "acme/fallback/reference-to-video";
const CLIP = "acme/cog-clip/text-to-video";
const IMG = "https://example.com/ref.png";

let stack: VendorStack | undefined;
let fal: FalServer;
let replicate: ReplicateServer;
let cog: CogServer;
let file: string;
let t: TestRefvid;
let tenant: Tenant;

/** The example catalog, pointed at the local vendors, with two models of the test's own. */
async function catalogDocument(
  { fal, replicate, cog }: Vendors,
  seedancePrice720 = "0.40",
): Promise<Record<string, any>> {
  const doc = parseYaml(await readFile(join(EXAMPLE_DIR, "catalog.yaml"), "utf8")) as Record<string, any>;
  doc.providers = {
    fal: { type: "fal", url: fal.url, token_env: "FAL_KEY" },
    replicate: { type: "replicate", url: replicate.url, token_env: "REPLICATE_API_TOKEN" },
    box: { type: "cog", url: cog.url },
  };
  for (const model of Object.values(doc.models) as Record<string, any>[]) {
    if (typeof model.input_schema === "string") model.input_schema = join(EXAMPLE_DIR, model.input_schema);
    for (const route of model.routes ?? []) {
      if (typeof route.vendor_schema === "string")
        route.vendor_schema = join(EXAMPLE_DIR, route.vendor_schema);
    }
  }
  for (const tier of doc.models[SEEDANCE].pricing) {
    if (tier.when.resolution === "720p") tier.usd_per_second = seedancePrice720;
  }
  doc.models[FALLBACK] = {
    name: "Fallback",
    summary: "Up to 12 images; fal takes 9, Replicate more.",
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["prompt"],
      properties: {
        prompt: { type: "string", minLength: 1 },
        image_urls: { type: "array", maxItems: 12, items: { type: "string" } },
        duration: { type: "integer", minimum: 1, maximum: 20, default: 5 },
      },
    },
    fields: { prompt: "prompt", duration: "duration" },
    max_duration_seconds: 20,
    references: { image: { field: "image_urls" } },
    pricing: [{ usd_per_second: "0.50" }],
    routes: [
      {
        name: "fal-9",
        provider: "fal",
        model: FAL_SEEDANCE,
        map: '{"prompt": prompt, "image_urls": image_urls, "duration": $string(duration)}',
        vendor_schema: join(VENDORS, "fal", "bytedance__seedance-2.0__reference-to-video.input.json"),
        cost: { usd_per_second: "0.30" },
      },
      {
        name: "replicate-many",
        provider: "replicate",
        model: `${REPLICATE_MODEL}:${REPLICATE_VERSION}`,
        map: '{"prompt": prompt, "reference_images": image_urls, "duration": duration}',
        output: "$",
        vendor_schema: join(VENDORS, "replicate", "bytedance__seedance-2.0.input.json"),
        cost: { usd_per_second: "0.20" },
      },
    ],
  };
  doc.models[CLIP] = {
    name: "Cog clip",
    summary: "A text-to-video model on a GPU box, 1 to 8 s.",
    input_schema: {
      type: "object",
      additionalProperties: false,
      required: ["prompt"],
      properties: {
        prompt: { type: "string", minLength: 1 },
        seconds: { $ref: "#/$defs/Seconds", default: 4 },
      },
      $defs: { Seconds: { type: "integer", minimum: 1, maximum: 8 } },
    },
    fields: { prompt: "prompt", duration: "seconds" },
    max_duration_seconds: 8,
    pricing: [{ usd_per_second: "0.05" }],
    routes: [
      {
        provider: "box",
        map: '{"text": prompt, "num_frames": seconds * 24}',
        output: "$",
        cost: { usd_per_second: "0.01" },
      },
    ],
  };
  return doc;
}

beforeAll(async () => {
  stack = await startVendorStack({
    fal: {
      endpoints: [FAL_SEEDANCE],
      inputSchemas: { [FAL_SEEDANCE]: vendorInputSchema("fal", FAL_SEEDANCE, VENDORS) },
    },
    replicate: {
      model: REPLICATE_MODEL,
      versionId: REPLICATE_VERSION,
      inputSchemas: { [REPLICATE_MODEL]: vendorInputSchema("replicate", REPLICATE_MODEL, VENDORS) },
    },
    cog: {
      inputSchema: {
        type: "object",
        required: ["text"],
        properties: { text: { type: "string" }, num_frames: { type: "integer", maximum: 192 } },
      },
    },
    file: {
      name: "catalog.yaml",
      variable: "REFVID_CATALOG_FILE",
      text: async (vendors) => toYaml(await catalogDocument(vendors)),
    },
  });
  ({ fal, replicate, cog, file, t, tenant } = stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  expect(t?.mismatches ?? []).toEqual([]);
}, 60_000);

const submitted = (server: { stats: { requests: { method: string; kind?: string }[] } }) =>
  server.stats.requests.filter((r) => r.method === "POST" || r.method === "PUT").length;

describe("catalog models on each vendor type", () => {
  it("lists the catalog's models beside the built-in ones, with schema, limits and prices", async () => {
    const list = await tenant.call("GET", "/v1/models");
    expect(list.status).toBe(200);
    const slugs = list.body.data.map((m: { slug: string }) => m.slug);
    expect(slugs).toEqual(
      expect.arrayContaining(["lab-a/model-a/reference-to-video", SEEDANCE, FALLBACK, CLIP]),
    );
    const one = await tenant.call("GET", `/v1/models/${SEEDANCE}`);
    expect(one.body).toMatchObject({
      slug: SEEDANCE,
      name: "Seedance 2.0",
      run_path: `/v1/run/${SEEDANCE}`,
      limits: { max_duration_seconds: 15, max_total_references: 12 },
      pricing: {
        tiers: expect.arrayContaining([
          { tier: "720p", when: { resolution: "720p" }, usd_per_second: "0.40" },
        ]),
      },
    });
    expect(one.body.input_schema.properties.duration.enum).toContain("15");
    // A catalog schema is shown as the operator wrote it, its own references intact.
    const clip = await tenant.call("GET", `/v1/models/${CLIP}`);
    expect(clip.body.input_schema.properties.seconds).toEqual({ $ref: "#/$defs/Seconds", default: 4 });
  });

  it("fal: the input goes as the vendor's schema wants it, and the video at video.url is billed", async () => {
    const before = fal.stats.submits;
    const res = await tenant.call("POST", `/v1/run/${SEEDANCE}`, {
      input: { prompt: "@Image1 walks", image_urls: [IMG], duration: "5" },
      sync: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      endpoint: SEEDANCE,
      mode: "reference-to-video",
      status: "succeeded",
      billing: { unit_price: "0.40", billable_seconds: OUTPUT_SECONDS, amount: "1.20" },
    });
    expect(fal.stats.submits).toBe(before + 1);
    const job = [...fal.stats.jobs.values()].at(-1);
    // Defaults filled in from our schema; fal's own names and values.
    expect(job?.input).toEqual({
      prompt: "@Image1 walks",
      image_urls: [IMG],
      duration: "5",
      resolution: "720p",
      aspect_ratio: "auto",
      generate_audio: true,
    });
  });

  it("Replicate: values translated by the route's map, the video taken from a bare-string output", async () => {
    const res = await tenant.call("POST", `/v1/run/${FALLBACK}`, {
      input: {
        prompt: "ten images",
        image_urls: Array.from({ length: 10 }, (_, i) => `${IMG}?${i}`),
        duration: 6,
      },
      sync: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "succeeded", billing: { amount: "1.50" } });
    const body = replicate.stats.requests.filter((r) => r.method === "POST").at(-1)?.body as Record<
      string,
      any
    >;
    expect(body.input).toMatchObject({ prompt: "ten images", duration: 6 });
    expect(body.input.reference_images).toHaveLength(10);
  });

  it("Cog: the box gets its own fields, computed by the map", async () => {
    const tooLong = await tenant.call("POST", `/v1/run/${CLIP}`, { input: { prompt: "waves", seconds: 9 } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.fields[0].field).toBe("body.input.seconds");
    const res = await tenant.call("POST", `/v1/run/${CLIP}`, { input: { prompt: "waves" }, sync: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: "succeeded",
      mode: "text-to-video",
      billing: { amount: "0.15" },
    });
    expect(cog.stats.jobs.at(-1)?.input).toEqual({ text: "waves", num_frames: 96 });
  });
});

describe("vendor schemas at submit", () => {
  it("refuses an input no route takes with a 400 naming our field and the limit, and calls no vendor", async () => {
    const counts = [submitted(fal), submitted(replicate)];
    const before = (await tenant.call("GET", "/v1/account")).body;
    const res = await tenant.call("POST", `/v1/run/${FALLBACK}`, {
      input: { prompt: "too long", image_urls: [IMG], duration: 20 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe("invalid_request");
    const fields = res.body.error.fields.map(
      (f: { field: string; message: string }) => `${f.field}: ${f.message}`,
    );
    expect(fields).toEqual([
      "body.input.duration: must be one of auto, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 (route fal-9: the vendor's duration); must be at most 15 (route replicate-many: the vendor's duration)",
    ]);
    expect([submitted(fal), submitted(replicate)]).toEqual(counts);
    const after = (await tenant.call("GET", "/v1/account")).body;
    expect(after.wallet).toEqual(before.wallet);
  });

  it("checks a catalog model's input against its own schema first, with the typed endpoints' error body", async () => {
    const res = await tenant.call("POST", `/v1/run/${SEEDANCE}`, {
      input: { prompt: "x", duration: "16", extra: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.fields).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "body.input.duration" }),
        expect.objectContaining({ field: "body.input.extra", message: "is not a field of this request" }),
      ]),
    );
  });

  it("skips a route whose vendor refuses the input: fal takes 9 images, so 10 go to Replicate", () => {
    // The Replicate run above had 10 images: fal never received it.
    const falBodies = fal.stats.requests
      .filter((r) => r.method === "POST")
      .map((r) => r.body as { prompt?: string });
    expect(falBodies.some((b) => b?.prompt === "ten images")).toBe(false);
  });

  it("prices a catalog model's input in price preview, and refuses what a submit would", async () => {
    const ok = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: SEEDANCE,
      input: { prompt: "p", duration: "10", resolution: "480p" },
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      unit_price: "0.18",
      billable_seconds: 10,
      amount: "1.80",
      price_tier: "480p",
    });
    const auto = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: SEEDANCE,
      input: { prompt: "p" },
    });
    expect(auto.body).toMatchObject({ billable_seconds: 15, amount: "6.00" });
    const bad = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: FALLBACK,
      input: { prompt: "p", duration: 20 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe("body.input.duration");
  });

  it("finds catalog runs by their model in run search", async () => {
    const res = await tenant.call("POST", "/v1/runs/search", { endpoint: CLIP });
    expect(res.status).toBe(201);
    expect(res.body.data.length).toBeGreaterThan(0);
    expect(res.body.data.every((run: { endpoint: string }) => run.endpoint === CLIP)).toBe(true);
  });
});

describe("money an operator can trust", () => {
  it("records each run's route and vendor cost; margins add up to price minus cost, run by run", async () => {
    const runs = await t.admin("POST", "/admin/v1/runs/search", {
      organization_id: tenant.organizationId,
      limit: 100,
    });
    const succeeded = runs.body.data.filter((run: { status: string }) => run.status === "succeeded");
    expect(succeeded.map((run: { route: string }) => run.route).sort()).toEqual(
      ["box", "fal-seedance", "replicate-many"].sort(),
    );
    const costOf = { "fal-seedance": "0.9072", "replicate-many": "0.60", box: "0.03" } as Record<
      string,
      string
    >;
    for (const run of succeeded) expect(run.vendor_cost_usd).toBe(costOf[run.route]);

    const usage = await t.admin(
      "GET",
      `/admin/v1/usage?group_by=route&organization_id=${tenant.organizationId}`,
    );
    const byRoute = Object.fromEntries(
      usage.body.data.map(
        (row: { group: string; spend_usd: string; vendor_cost_usd: string; margin_usd: string }) => [
          row.group,
          [row.spend_usd, row.vendor_cost_usd, row.margin_usd],
        ],
      ),
    );
    expect(byRoute).toMatchObject({
      "fal-seedance": ["1.20", "0.9072", "0.2928"],
      "replicate-many": ["1.50", "0.60", "0.90"],
      box: ["0.15", "0.03", "0.12"],
    });
  });
});

describe("reloading the catalog", () => {
  it("refuses a bad file with the boot message and keeps the catalog in service", async () => {
    const good = await readFile(file, "utf8");
    await writeFile(file, good.replace(/usd_per_second: "?0\.40"?/, 'usd_per_second: "forty cents"'));
    const res = await t.admin("POST", "/admin/v1/catalog/reload");
    expect(res.status).toBe(422);
    expect(res.body.error.type).toBe("catalog_invalid");
    expect(res.body.error.message).toMatch(
      /REFVID_CATALOG_FILE: .*catalog\.yaml is not valid:\n\s+models\.bytedance\/seedance-2\.0\/reference-to-video\.pricing\[1\]\.usd_per_second: must be an amount of USD/,
    );
    await writeFile(file, good);
    const model = await tenant.call("GET", `/v1/models/${SEEDANCE}`);
    expect(model.status).toBe(200);
  });

  it("puts a new price in service for new runs; a run admitted before keeps its own", async () => {
    fal.knobs.latencyMs = 1500;
    const inFlight = await tenant.call("POST", `/v1/run/${SEEDANCE}`, {
      input: { prompt: "admitted before", image_urls: [IMG], duration: "5" },
    });
    expect(inFlight.status).toBe(201);
    await writeFile(file, toYaml(await catalogDocument({ fal, replicate, cog }, "0.50")));
    const reload = await t.admin("POST", "/admin/v1/catalog/reload");
    expect(reload.status).toBe(200);
    expect(reload.body.models).toEqual(expect.arrayContaining([SEEDANCE, FALLBACK, CLIP]));
    fal.knobs.latencyMs = 150;

    const after = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: SEEDANCE,
      input: { prompt: "p", duration: "5" },
    });
    expect(after.body).toMatchObject({ unit_price: "0.50", amount: "2.50" });
    const ended = await eventually(async () => {
      const run = await tenant.call("GET", `/v1/runs/${inFlight.body.run_id}`);
      return run.body.status === "succeeded" ? run.body : undefined;
    }, 30_000);
    expect(ended.billing).toMatchObject({ unit_price: "0.40", amount: "1.20" });
  });
});
