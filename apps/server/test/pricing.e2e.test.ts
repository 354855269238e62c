/**
 * Price preview end to end: every price tier previewed, then the same input submitted and billed
 * as previewed; and the preview answers of a server without response checks, as production
 * serves them, equal to the checked server's.
 */
import type { ModelSlug } from "@refvid/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningRefvid } from "../src/runtime.js";
import { A, B, BUSY, C, D, expectInvalid, fast, IMAGES, VIDEOS } from "./api-fixtures.js";
import { rawRequest, startOwnRefvid, useTestRefvid } from "./harness.js";

const t = useTestRefvid();

interface PriceCase {
  name: string;
  slug: ModelSlug;
  input: Record<string, unknown>;
  unitPrice: string;
  seconds: number;
  amount: string;
  /** What the run is charged when it differs from the preview (model-a `auto`: 10 s delivered). */
  billed?: { seconds: number; amount: string };
}

// biome-ignore format: one row per case reads best as a table
const PRICES: PriceCase[] = [
  // The eleven tiers.
  { name: "model-a 480p", slug: A, input: { resolution: "480p", duration: "4" }, unitPrice: "0.072", seconds: 4, amount: "0.288" },
  { name: "model-a 720p", slug: A, input: { resolution: "720p", duration: "4" }, unitPrice: "0.162", seconds: 4, amount: "0.648" },
  { name: "model-a 1080p", slug: A, input: { resolution: "1080p", duration: "4" }, unitPrice: "0.398", seconds: 4, amount: "1.592" },
  { name: "model-a 480p with video input", slug: A, input: { resolution: "480p", duration: "4", video_urls: VIDEOS }, unitPrice: "0.043", seconds: 4, amount: "0.172" },
  { name: "model-a 720p with video input", slug: A, input: { resolution: "720p", duration: "4", video_urls: VIDEOS }, unitPrice: "0.097", seconds: 4, amount: "0.388" },
  { name: "model-a 1080p with video input", slug: A, input: { resolution: "1080p", duration: "4", video_urls: VIDEOS }, unitPrice: "0.239", seconds: 4, amount: "0.956" },
  { name: "model-b 480P", slug: B, input: { resolution: "480P", duration: 5 }, unitPrice: "0.056", seconds: 5, amount: "0.28" },
  { name: "model-b 768P", slug: B, input: { resolution: "768P", duration: 5 }, unitPrice: "0.056", seconds: 5, amount: "0.28" },
  { name: "model-c 480p", slug: C, input: { resolution: "480p", duration: 1, reference_image_urls: IMAGES }, unitPrice: "0.035", seconds: 1, amount: "0.035" },
  { name: "model-c 720p", slug: C, input: { resolution: "720p", duration: 1, reference_image_urls: IMAGES }, unitPrice: "0.049", seconds: 1, amount: "0.049" },
  { name: "model-d 720p", slug: D, input: { resolution: "720p", duration: "4s", image_urls: IMAGES }, unitPrice: "0.071", seconds: 4, amount: "0.284" },
  { name: "model-d 1080p", slug: D, input: { resolution: "1080p", duration: "4s", image_urls: IMAGES }, unitPrice: "0.106", seconds: 4, amount: "0.424" },
  // Defaults, and inputs that must not change the price.
  { name: "model-a defaults (720p, auto: reserves 30 s)", slug: A, input: {}, unitPrice: "0.162", seconds: 30, amount: "4.86", billed: { seconds: 10, amount: "1.62" } },
  { name: "model-a generate_audio false", slug: A, input: { duration: "4", generate_audio: false }, unitPrice: "0.162", seconds: 4, amount: "0.648" },
  { name: "model-a 480p with video input, no audio", slug: A, input: { resolution: "480p", duration: "4", video_urls: VIDEOS, generate_audio: false }, unitPrice: "0.043", seconds: 4, amount: "0.172" },
  { name: "model-b defaults (768P, 5 s)", slug: B, input: {}, unitPrice: "0.056", seconds: 5, amount: "0.28" },
  { name: "model-c defaults (720p, 6 s)", slug: C, input: { reference_image_urls: IMAGES }, unitPrice: "0.049", seconds: 6, amount: "0.294" },
  { name: "model-d defaults (720p, 8s)", slug: D, input: { image_urls: IMAGES }, unitPrice: "0.071", seconds: 8, amount: "0.568" },
  { name: "model-d generate_audio false", slug: D, input: { duration: "4s", image_urls: IMAGES, generate_audio: false }, unitPrice: "0.071", seconds: 4, amount: "0.284" },
];

describe("pricing: preview, then the same input submitted", () => {
  it.concurrent.for(PRICES)("$name", async (c, { expect }) => {
    const tenant = await t.tenant(BUSY);
    const input = { prompt: fast(`priced: ${c.name}`), ...c.input } as never;
    const preview = await tenant.client.previewPrice(c.slug, input);
    expect(preview).toMatchObject({
      endpoint: c.slug,
      currency: "usd",
      unit_price: c.unitPrice,
      billable_seconds: c.seconds,
      amount: c.amount,
    });
    if (c.input.video_urls) expect(preview.price_tier).toContain("with video input");

    const run = await tenant.client.submit(c.slug, input, { sync: true });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.billing).toEqual({
      amount: c.billed?.amount ?? preview.amount,
      currency: "usd",
      unit_price: preview.unit_price,
      billable_seconds: c.billed?.seconds ?? preview.billable_seconds,
    });
    const account = await tenant.client.getAccount();
    expect(account.wallet.total_spent_usd).toBe(run.billing?.amount);
    expect(account.wallet.reserved_usd).toBe("0.00");
  });

  it("a preview of an invalid input is 400 and creates no run", async () => {
    const tenant = await t.tenant();
    const res = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: D,
      input: { prompt: "x", image_urls: IMAGES, duration: "5s" },
    });
    expectInvalid(res, "body.input.duration");
    expect((await tenant.client.searchRuns()).data).toEqual([]);
  });
});

describe("price preview as production serves it (no response checks)", () => {
  let plain: RunningRefvid;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    // No onResponseMismatch: the validator runs as in production.
    ({ refvid: plain, stop } = await startOwnRefvid({ REFVID_ADMIN_TOKEN: t.adminToken }));
  });
  afterAll(() => stop());

  it("answers every body as the fully checked server does", async () => {
    const admin = (path: string, body: unknown) =>
      rawRequest(plain.url, "POST", path, { headers: { authorization: `Bearer ${t.adminToken}` }, body });
    const org = await admin("/admin/v1/organizations", { name: "plain" });
    const orgId = (org.body as { organization_id: string }).organization_id;
    const plainKey = ((await admin(`/admin/v1/organizations/${orgId}/api-keys`, {})).body as { key: string })
      .key;
    const checked = await t.tenant();
    const bodies: unknown[] = [
      { endpoint: D, input: { prompt: "x", image_urls: IMAGES, duration: "4s" } },
      {
        endpoint: "lab-a/model-a/reference-to-video",
        input: { prompt: "x", image_urls: IMAGES, video_urls: IMAGES },
      },
      { input: { prompt: "x" } },
      { endpoint: "lab-x/model-x/reference-to-video", input: { prompt: "x" } },
      { endpoint: D, input: { prompt: "x", image_urls: IMAGES, duration: "5s", extra: 1 } },
      { endpoint: D, input: { prompt: 7 } },
      [],
      "not json",
    ];
    const valid = bodies[0];
    const asked: [string, unknown][] = [
      ...bodies.map((body): [string, unknown] => ["/v1/pricing/preview", body]),
      ["/v1/pricing/preview?bogus=1", valid],
    ];
    for (const [path, body] of asked) {
      const ask = (base: string, key: string) =>
        rawRequest(base, "POST", path, { headers: { authorization: `Key ${key}` }, body });
      const [want, got] = await Promise.all([ask(t.url, checked.apiKey), ask(plain.url, plainKey)]);
      const strip = (answer: { status: number; body: unknown }) =>
        JSON.parse(JSON.stringify(answer.body).replace(/"request_id":"[^"]*"/g, '"request_id":"x"'));
      expect({ status: got.status, body: strip(got) }, `${path} ${JSON.stringify(body)}`).toEqual({
        status: want.status,
        body: strip(want),
      });
    }
  });
});
