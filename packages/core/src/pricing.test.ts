import { describe, expect, it } from "vitest";
import {
  MODELS,
  type ModelInput,
  type BuiltInModelSlug as ModelSlug,
  type NormalizedRequest,
  normalizeInput,
  type PriceTier,
  type UnitPrice,
} from "./catalog.js";
import { formatUsd } from "./money.js";
import {
  amountFor,
  type CostComparison,
  chargeFor,
  chargeForRun,
  compareCostWithPrice,
  priceOf,
  priceRequest,
  unitOfTable,
} from "./pricing.js";

const A = "lab-a/model-a/reference-to-video";
const B = "lab-b/model-b/reference-to-video";
const C = "lab-c/model-c/reference-to-video";
const D = "lab-d/model-d/reference-to-video";
const img = ["https://example.com/a.png"];
const vid = ["https://example.com/a.mp4"];

// [name, slug, input, unit price, billable seconds, amount] — the interface's "Prices" table.
const cases: [string, ModelSlug, ModelInput, string, number, string][] = [
  [
    "model-a 480p, no video",
    A,
    { prompt: "p", resolution: "480p", duration: "10", image_urls: img },
    "0.072",
    10,
    "0.72",
  ],
  ["model-a 720p, no video", A, { prompt: "p", resolution: "720p", duration: "10" }, "0.162", 10, "1.62"],
  ["model-a 1080p, no video", A, { prompt: "p", resolution: "1080p", duration: "10" }, "0.398", 10, "3.98"],
  [
    "model-a 480p, with video",
    A,
    { prompt: "p", resolution: "480p", duration: "10", video_urls: vid },
    "0.043",
    10,
    "0.43",
  ],
  [
    "model-a 720p, with video",
    A,
    { prompt: "p", resolution: "720p", duration: "10", video_urls: vid },
    "0.097",
    10,
    "0.97",
  ],
  [
    "model-a 1080p, with video",
    A,
    { prompt: "p", resolution: "1080p", duration: "10", video_urls: vid },
    "0.239",
    10,
    "2.39",
  ],
  ["model-b 480P", B, { prompt: "p", resolution: "480P", duration: 7 }, "0.056", 7, "0.392"],
  ["model-b 768P", B, { prompt: "p", resolution: "768P", duration: 15 }, "0.056", 15, "0.84"],
  [
    "model-c 480p",
    C,
    { prompt: "p", resolution: "480p", duration: 3, reference_image_urls: img },
    "0.035",
    3,
    "0.105",
  ],
  [
    "model-c 720p",
    C,
    { prompt: "p", resolution: "720p", duration: 15, reference_image_urls: img },
    "0.049",
    15,
    "0.735",
  ],
  [
    "model-d 720p",
    D,
    { prompt: "p", resolution: "720p", duration: "4s", image_urls: img },
    "0.071",
    4,
    "0.284",
  ],
  [
    "model-d 1080p",
    D,
    { prompt: "p", resolution: "1080p", duration: "6s", image_urls: img },
    "0.106",
    6,
    "0.636",
  ],
  // Defaults: model-a auto at 720p reserves 30 s; model-b 5 s; model-c 6 s at 720p; model-d 8 s at 720p.
  ["model-a defaults", A, { prompt: "p", image_urls: img }, "0.162", 30, "4.86"],
  ["model-a defaults with video", A, { prompt: "p", video_urls: vid }, "0.097", 30, "2.91"],
  ["model-b defaults", B, { prompt: "p" }, "0.056", 5, "0.28"],
  ["model-c defaults", C, { prompt: "p", reference_image_urls: img }, "0.049", 6, "0.294"],
  ["model-d defaults", D, { prompt: "p", image_urls: img }, "0.071", 8, "0.568"],
  [
    "model-a generate_audio off costs the same",
    A,
    { prompt: "p", duration: "5", generate_audio: false },
    "0.162",
    5,
    "0.81",
  ],
];

describe("priceRequest", () => {
  it.each(cases)("%s", (_name, slug, input, unit, seconds, amount) => {
    const price = priceOf(MODELS[slug], normalizeInput(slug, input));
    expect(price.unit).toBe("second");
    expect(formatUsd(price.unitPrice)).toBe(unit);
    expect(price.billableSeconds).toBe(seconds);
    expect(formatUsd(price.amount)).toBe(amount);
  });
});

describe("chargeFor", () => {
  const price = priceOf(MODELS[A], normalizeInput(A, { prompt: "p", resolution: "720p" })); // auto: 30 s reserved
  it.each([
    ["a whole length", 12, 12],
    ["a fraction, rounded up", 12.4, 13],
    ["container padding, ignored", 12.03, 12],
    ["under a second, one second", 0.4, 1],
    ["past the reservation, capped", 31.5, 30],
  ])("bills %s", (_name, delivered, seconds) => {
    const charge = chargeFor(price, delivered);
    expect(charge.billableSeconds).toBe(seconds);
    expect(charge.amount).toBe(162_000 * seconds);
  });
});

/** A catalog model priced per run: 1.25 USD at 720p, 2.00 USD at 1080p, up to 15 s. */
const flatFee = {
  name: "flat-fee",
  maxDurationSeconds: 15,
  priceTable: [
    { tier: "720p", when: { resolution: "720p" }, unit: "run", unitPrice: 1_250_000 },
    { tier: "1080p", when: { resolution: "1080p" }, unit: "run", unitPrice: 2_000_000 },
  ] satisfies PriceTier[],
};
const request = (resolution: string, duration: number | "auto"): NormalizedRequest => ({
  slug: "acme/flat-fee/text-to-video",
  prompt: "p",
  duration,
  resolution,
  aspectRatio: "",
  generateAudio: false,
  references: { image: [], video: [], audio: [] },
});

describe("priceRequest, per run", () => {
  it.each<
    [string, NormalizedRequest, { unitPrice: number; billableSeconds: number; amount: number; tier: string }]
  >([
    [
      "a duration asked",
      request("720p", 5),
      { unitPrice: 1_250_000, billableSeconds: 5, amount: 1_250_000, tier: "720p" },
    ],
    [
      "the longest asked",
      request("720p", 15),
      { unitPrice: 1_250_000, billableSeconds: 15, amount: 1_250_000, tier: "720p" },
    ],
    [
      "auto: the model's longest",
      request("1080p", "auto"),
      { unitPrice: 2_000_000, billableSeconds: 15, amount: 2_000_000, tier: "1080p" },
    ],
  ])("reserves the run's price whatever its length: %s", (_name, given, want) => {
    expect(priceRequest(flatFee, given)).toEqual({ unit: "run", ...want });
  });

  it("refuses an input no tier applies to, as per second", () => {
    expect(priceRequest(flatFee, request("4k", 5))).toMatchObject({
      field: "body.input.resolution",
      rule: "price",
    });
  });
});

describe("chargeFor, per run", () => {
  const price = priceOf(flatFee, request("720p", 10));
  it.each([
    ["a whole length", 10, 10],
    ["a shorter video", 4.2, 5],
    ["under a second", 0.4, 1],
    ["past the reservation", 12, 10],
  ])("charges the run's price for %s, and counts its seconds as per second", (_name, delivered, seconds) => {
    expect(chargeFor(price, delivered)).toEqual({ billableSeconds: seconds, amount: 1_250_000 });
  });

  it("charges a run at the unit it was admitted with", () => {
    const run = { priceUnit: "run", unitPrice: 1_250_000, reservedSeconds: 10 } as const;
    expect(chargeForRun(run, 3)).toEqual({ billableSeconds: 3, amount: 1_250_000 });
    expect(chargeForRun({ ...run, priceUnit: "second", unitPrice: 100_000 }, 3)).toEqual({
      billableSeconds: 3,
      amount: 300_000,
    });
  });
});

describe("amountFor", () => {
  it.each<[string, UnitPrice, number, number]>([
    ["per second, times the seconds", { unit: "second", unitPrice: 30_240 }, 3, 90_720],
    ["per second, no seconds", { unit: "second", unitPrice: 30_240 }, 0, 0],
    ["per run, whatever the seconds", { unit: "run", unitPrice: 400_000 }, 3, 400_000],
    ["per run, a long run", { unit: "run", unitPrice: 400_000 }, 600, 400_000],
  ])("%s", (_name, price, seconds, want) => {
    expect(amountFor(price, seconds)).toBe(want);
  });
});

describe("compareCostWithPrice", () => {
  const perSecond = (unitPrice: number): UnitPrice => ({ unit: "second", unitPrice });
  const perRun = (unitPrice: number): UnitPrice => ({ unit: "run", unitPrice });
  // [name, cost, price, the model's longest run, what is compared]
  it.each<[string, UnitPrice, UnitPrice, number, CostComparison]>([
    [
      "per second against per second",
      perSecond(300_000),
      perSecond(250_000),
      15,
      { cost: 300_000, price: 250_000, seconds: null },
    ],
    [
      "per run against per run",
      perRun(400_000),
      perRun(1_250_000),
      15,
      { cost: 400_000, price: 1_250_000, seconds: null },
    ],
    [
      "per second against per run: the longest run",
      perSecond(100_000),
      perRun(1_250_000),
      15,
      { cost: 1_500_000, price: 1_250_000, seconds: 15 },
    ],
    [
      "per run against per second: the shortest run billed",
      perRun(400_000),
      perSecond(100_000),
      15,
      { cost: 400_000, price: 100_000, seconds: 1 },
    ],
  ])("%s", (_name, cost, price, maxSeconds, want) => {
    expect(compareCostWithPrice(cost, price, maxSeconds)).toEqual(want);
  });
});

describe("unitOfTable", () => {
  it.each<[string, UnitPrice[], string]>([
    [
      "per second",
      [
        { unit: "second", unitPrice: 1 },
        { unit: "second", unitPrice: 2 },
      ],
      "second",
    ],
    ["per run", [{ unit: "run", unitPrice: 1 }], "run"],
  ])("gives a table's one unit: %s", (_name, table, want) => {
    expect(unitOfTable(table)).toBe(want);
  });

  it.each<[string, UnitPrice[]]>([
    [
      "a mix",
      [
        { unit: "second", unitPrice: 1 },
        { unit: "run", unitPrice: 2 },
      ],
    ],
    ["no tier", []],
  ])("throws on %s", (_name, table) => {
    expect(() => unitOfTable(table)).toThrow(RangeError);
  });
});
