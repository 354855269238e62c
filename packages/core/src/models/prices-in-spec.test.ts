/** The prices the spec documents for each model are the prices core charges. */
import { loadOpenapiDocument } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { MODEL_SLUGS, MODELS } from "../catalog.js";
import { parseUsd } from "../money.js";

const paths = loadOpenapiDocument().paths as Record<string, { post?: { description?: string } }>;

describe.each(MODEL_SLUGS)("%s", (slug) => {
  it("documents exactly core's per-second prices on its submit operation", () => {
    const description = paths[`/v1/run/${slug}`]?.post?.description ?? "";
    const line = description.split("\n").find((text) => text.startsWith("Price:"));
    expect(line, "a 'Price:' line in the operation's description").toBeDefined();
    const documented = [...(line ?? "").matchAll(/\b\d+\.\d{2,6}\b/g)].map(([usd]) => parseUsd(usd));
    const sorted = (prices: readonly (number | null)[]) => [...prices].sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(sorted(documented)).toEqual(sorted(MODELS[slug].prices));
  });
});
