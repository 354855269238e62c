import { describe, expect, it } from "vitest";
import { MODELS, type ModelInput, type BuiltInModelSlug as ModelSlug, normalizeInput } from "./catalog.js";
import { formatUsd } from "./money.js";
import { chargeFor, priceOf } from "./pricing.js";

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
