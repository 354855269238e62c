/** The prices the spec documents for each model are the prices core charges. */
import type { ModelInputs } from "@refvid/api-types";
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { describe, expect, it } from "vitest";
import { type BuiltInModelSlug, MODEL_SLUGS, MODELS, normalizeInput } from "../catalog.js";
import { parseUsd } from "../money.js";
import { unitPriceOf } from "../pricing.js";

const IMAGE = "https://example.com/a.png";
const MINIMAL: { [S in BuiltInModelSlug]: ModelInputs[S] } = {
  "lab-a/model-a/reference-to-video": { prompt: "p", image_urls: [IMAGE] },
  "lab-b/model-b/reference-to-video": { prompt: "p", reference_image_urls: [IMAGE] },
  "lab-c/model-c/reference-to-video": { prompt: "p", reference_image_urls: [IMAGE] },
  "lab-d/model-d/reference-to-video": { prompt: "p", image_urls: [IMAGE] },
};

const paths = loadOpenapiDocument().paths as Record<string, { post?: { description?: string } }>;

describe.each(MODEL_SLUGS)("%s", (slug) => {
  it("documents exactly core's per-second prices on its submit operation", () => {
    const description = paths[`/v1/run/${slug}`]?.post?.description ?? "";
    const line = description.split("\n").find((text) => text.startsWith("Price:"));
    expect(line, "a 'Price:' line in the operation's description").toBeDefined();
    const documented = [...(line ?? "").matchAll(/\b\d+\.\d{2,6}\b/g)].map(([usd]) => parseUsd(usd));
    const sorted = (prices: readonly (number | null)[]) => [...prices].sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(sorted(documented)).toEqual(sorted(MODELS[slug].priceTable.map((t) => t.unitPrice)));
  });

  it("is priced per second, as the interface prices it", () => {
    expect(new Set(MODELS[slug].priceTable.map((tier) => tier.unit))).toEqual(new Set(["second"]));
  });

  it("prices an input the way its price table says", () => {
    const model = MODELS[slug];
    const base = normalizeInput(slug, MINIMAL[slug]);
    for (const tier of model.priceTable) {
      const request = {
        ...base,
        resolution: String(tier.when.resolution ?? base.resolution),
        references: {
          ...base.references,
          video: tier.when.video_references ? ["https://example.com/v.mp4"] : [],
        },
      };
      expect(unitPriceOf(model, request), tier.tier).toEqual({
        unit: "second",
        unitPrice: tier.unitPrice,
        tier: tier.tier,
      });
    }
  });
});
