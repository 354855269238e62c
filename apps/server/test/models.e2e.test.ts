/**
 * The models list against the real server: every model with an input schema a JSON Schema
 * validator can use as is, its limits, and a price table that price preview agrees with.
 */
import type { components } from "@refvid/api-types";
import { NotFoundError } from "@refvid/client";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { type Tenant, useTestRefvid } from "./harness.js";

type Model = components["schemas"]["Model"];
const t = useTestRefvid();
let tenant: Tenant;
let models: Model[];
beforeAll(async () => {
  tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
  const res = await tenant.call("GET", "/v1/models");
  expect(res.status).toBe(200);
  models = res.body.data;
});

const IMAGE = "https://example.com/a.png";
/** A valid input of each model, with the references each one needs. */
const SAMPLE: Record<string, Record<string, unknown>> = {
  "lab-a/model-a/reference-to-video": { prompt: "p", image_urls: [IMAGE] },
  "lab-b/model-b/reference-to-video": { prompt: "p", reference_image_urls: [IMAGE] },
  "lab-c/model-c/reference-to-video": { prompt: "p", reference_image_urls: [IMAGE] },
  "lab-d/model-d/reference-to-video": { prompt: "p", image_urls: [IMAGE] },
};

describe("GET /v1/models", () => {
  it("lists the four models, each with where to run it", () => {
    expect(models.map((m) => m.slug)).toEqual(Object.keys(SAMPLE));
    for (const model of models) {
      expect(model.run_path).toBe(`/v1/run/${model.slug}`);
      expect(model.summary.length).toBeGreaterThan(10);
      expect(model.limits.max_duration_seconds).toBeGreaterThan(0);
    }
    const modelA = models[0] as Model;
    expect(modelA.limits.references.map((r) => [r.kind, r.field])).toEqual([
      ["image", "image_urls"],
      ["video", "video_urls"],
      ["audio", "audio_urls"],
    ]);
    expect(modelA.limits.references[1]).toMatchObject({ formats: ["mp4", "mov"], max_seconds: 30.2 });
  });

  it("gives input schemas with no references left, that accept a valid input and name what is wrong in another", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    for (const model of models) {
      expect(JSON.stringify(model.input_schema)).not.toContain("$ref");
      const validate = ajv.compile(model.input_schema);
      expect(validate(SAMPLE[model.slug]), `${model.slug}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(validate({ ...SAMPLE[model.slug], prompt: 7, resolution: "4k" })).toBe(false);
      const fields = (validate.errors ?? []).map((e) => e.instancePath);
      expect(fields).toEqual(expect.arrayContaining(["/prompt", "/resolution"]));
    }
  });

  it("prices every tier as price preview prices an input that selects it", async () => {
    for (const model of models) {
      expect(model.pricing).toMatchObject({ currency: "usd", unit: "second" });
      for (const tier of model.pricing.tiers) {
        const { resolution, video_references: video } = tier.when as {
          resolution?: string;
          video_references?: boolean;
        };
        const input = {
          ...SAMPLE[model.slug],
          ...(resolution ? { resolution } : {}),
          ...(video ? { video_urls: ["https://example.com/v.mp4"] } : {}),
        };
        const preview = await tenant.call("POST", "/v1/pricing/preview", { endpoint: model.slug, input });
        expect(preview.status, JSON.stringify(preview.body)).toBe(201);
        expect(preview.body, `${model.slug} ${tier.tier}`).toMatchObject({
          unit_price: tier.usd_per_second,
          price_tier: tier.tier,
        });
      }
    }
  });
});

describe("GET /v1/models/{slug}", () => {
  it("answers one model as the list shows it, and 404 model_not_found for another slug", async () => {
    for (const model of models) {
      const res = await tenant.call("GET", `/v1/models/${model.slug}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(model);
    }
    const missing = await tenant.call("GET", "/v1/models/lab-x/model-x/reference-to-video");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ type: "model_not_found", code: 404 });
    expect(missing.body.error.message).toContain("lab-a/model-a/reference-to-video");
  });

  it("is what @refvid/client's listModels and getModel return; an unknown slug is a NotFoundError", async () => {
    expect((await tenant.client.listModels()).data).toEqual(models);
    expect(await tenant.client.getModel("lab-c/model-c/reference-to-video")).toEqual(models[2]);
    const missing = await tenant.client.getModel("lab-x/model-x/reference-to-video").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ type: "model_not_found", status: 404 });
  });

  it("needs an API key", async () => {
    const res = await fetch(`${t.url}/v1/models`);
    expect(res.status).toBe(401);
  });
});
