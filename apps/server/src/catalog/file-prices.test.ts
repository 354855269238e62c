import type { ModelDefinition, PriceTier } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { CatalogError, parseCatalogFile } from "./catalog-file.js";
import { type CostTier, type RouteLoss, routeLosses } from "./file-prices.js";

const SLUG = "acme/flat-fee/text-to-video";
const source = { file: "catalog.yaml", variable: "REFVID_CATALOG_FILE", env: {} };

/** A text-to-video model of up to 15 s, with `over` on top. */
const model = (over: Record<string, unknown> = {}) => ({
  name: "Flat fee",
  summary: "One price a run.",
  input_schema: {
    type: "object",
    properties: {
      prompt: { type: "string" },
      resolution: { type: "string", enum: ["720p", "1080p"], default: "720p" },
    },
  },
  fields: { prompt: "prompt", resolution: "resolution" },
  max_duration_seconds: 15,
  pricing: [{ usd_per_run: "1.25" }],
  ...over,
});
const file = (over: Record<string, unknown> = {}, models: Record<string, unknown> = {}) => ({
  providers: { sim: { type: "simulated" } },
  models: { [SLUG]: model(over), ...models },
});

function refusal(raw: unknown): string {
  try {
    parseCatalogFile(raw, source);
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return (err as Error).message;
  }
  throw new Error("expected a CatalogError");
}

describe("prices per run in the catalog file", () => {
  it("reads a model priced per run, and a route's cost per run or per second", () => {
    const catalog = parseCatalogFile(
      file({
        pricing: [
          { when: { resolution: "720p" }, usd_per_run: "1.25" },
          { when: { resolution: "1080p" }, usd_per_run: 2 },
        ],
        routes: [
          { name: "flat", provider: "sim", cost: { usd_per_run: "0.40" } },
          { name: "timed", provider: "sim", cost: [{ usd_per_second: "0.05" }] },
        ],
      }),
      source,
    );
    expect(catalog.models[0]?.model.priceTable).toEqual([
      { tier: "720p", when: { resolution: "720p" }, unit: "run", unitPrice: 1_250_000 },
      { tier: "1080p", when: { resolution: "1080p" }, unit: "run", unitPrice: 2_000_000 },
    ]);
    expect(catalog.routes[SLUG]?.map((route) => route.cost)).toEqual([
      [{ when: {}, unit: "run", unitPrice: 400_000 }],
      [{ when: {}, unit: "second", unitPrice: 50_000 }],
    ]);
    expect(catalog.losses).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    [
      "a tier with both prices",
      file({ pricing: [{ usd_per_second: "0.10", usd_per_run: "1.00" }] }),
      `models.${SLUG}.pricing[0]: give usd_per_second or usd_per_run, not both`,
    ],
    [
      "a tier with no price",
      file({ pricing: [{ when: { resolution: "720p" } }] }),
      `models.${SLUG}.pricing[0]: give a price: usd_per_second ("0.30" per second of output) or usd_per_run`,
    ],
    [
      "a per-run price that is not an amount",
      file({ pricing: [{ usd_per_run: "a dollar" }] }),
      `models.${SLUG}.pricing[0].usd_per_run: must be an amount of USD`,
    ],
    [
      "a model priced per second and per run",
      file({
        pricing: [
          { when: { resolution: "720p" }, usd_per_second: "0.10" },
          { when: { resolution: "1080p" }, usd_per_run: "2.00" },
        ],
      }),
      `models.${SLUG}.pricing[1].usd_per_run: the first price is per second; a model's prices are all per second or all per run`,
    ],
    [
      "a route's costs per run and per second",
      file({
        routes: [
          {
            provider: "sim",
            cost: [
              { when: { resolution: "720p" }, usd_per_run: "0.40" },
              { when: { resolution: "1080p" }, usd_per_second: "0.05" },
            ],
          },
        ],
      }),
      `models.${SLUG}.routes[0].cost[1].usd_per_second: the first cost is per run; a route's costs are all per second or all per run`,
    ],
    [
      "a route's one cost with both prices",
      file({ routes: [{ provider: "sim", cost: { usd_per_second: "0.05", usd_per_run: "0.40" } }] }),
      `models.${SLUG}.routes[0].cost: must be { usd_per_second: "0.30" }, { usd_per_run: "0.50" }, or a list of { when, usd_per_second or usd_per_run }`,
    ],
    [
      "a built-in model priced per run",
      {
        models: {
          "lab-d/model-d/reference-to-video": {
            pricing: [{ when: { resolution: "720p" }, usd_per_run: "1" }],
          },
        },
      },
      "models.lab-d/model-d/reference-to-video.pricing[0].usd_per_run: model-d is priced per second, as the interface prices it: give usd_per_second",
    ],
  ])("refuses %s, naming the path inside the file", (_name, raw, message) => {
    expect(refusal(raw)).toContain(message);
  });
});

describe("routes that cost more than the price, like with like", () => {
  const table = (unit: PriceTier["unit"], unitPrice: number): PriceTier[] => [
    { tier: "every input", when: {}, unit, unitPrice },
  ];
  const costs = (unit: CostTier["unit"], unitPrice: number): CostTier[] => [{ when: {}, unit, unitPrice }];
  const lossesOf = (priceTable: PriceTier[], cost: CostTier[]) =>
    routeLosses(
      { [SLUG]: [{ name: "r", cost, allowLoss: false }] },
      (): Pick<ModelDefinition, "priceTable" | "maxDurationSeconds"> => ({
        priceTable,
        maxDurationSeconds: 15,
      }),
    );
  const loss = (price: PriceTier[], cost: CostTier[], seconds: number | null): RouteLoss => ({
    slug: SLUG,
    route: "r",
    tier: "every input",
    price: { unit: price[0]?.unit ?? "second", unitPrice: price[0]?.unitPrice ?? 0 },
    cost: { unit: cost[0]?.unit ?? "second", unitPrice: cost[0]?.unitPrice ?? 0 },
    seconds,
    allowed: false,
  });

  // [name, price table, cost, seconds compared at (null: unit for unit) when it loses, or false]
  it.each<[string, PriceTier[], CostTier[], number | null | false]>([
    ["per run above per run", table("run", 1_250_000), costs("run", 1_300_000), null],
    ["per run at per run", table("run", 1_250_000), costs("run", 1_250_000), false],
    ["per second above per second", table("second", 100_000), costs("second", 150_000), null],
    ["per second below per second", table("second", 100_000), costs("second", 90_000), false],
    // 15 s at 0.09 USD/s is 1.35 USD, above 1.25 USD a run.
    [
      "per second, the longest run above the run's price",
      table("run", 1_250_000),
      costs("second", 90_000),
      15,
    ],
    // 15 s at 0.08 USD/s is 1.20 USD.
    [
      "per second, the longest run below the run's price",
      table("run", 1_250_000),
      costs("second", 80_000),
      false,
    ],
    // A 1 s run pays 0.10 USD; the vendor takes 0.40 USD.
    ["per run, above the shortest run's price", table("second", 100_000), costs("run", 400_000), 1],
    ["per run, at most the shortest run's price", table("second", 400_000), costs("run", 400_000), false],
  ])("%s", (_name, price, cost, seconds) => {
    expect(lossesOf(price, cost)).toEqual(seconds === false ? [] : [loss(price, cost, seconds)]);
  });
});
