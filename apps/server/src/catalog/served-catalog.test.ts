import { MODELS, type UnitPrice } from "@refvid/core";
import { describe, expect, it } from "vitest";
import type { Provider } from "../providers/types.js";
import {
  CatalogError,
  type CatalogFile,
  checkLosses,
  describeLoss,
  parseCatalogFile,
  type RouteLoss,
} from "./catalog-file.js";
import { CatalogVersion, ServedCatalog } from "./served-catalog.js";

const SLUG = "acme/video-1/text-to-video";
const losing = (allowLoss: boolean): CatalogFile =>
  parseCatalogFile(
    {
      providers: { box: { type: "cog", url: "http://127.0.0.1:1" } },
      models: {
        [SLUG]: {
          name: "Video 1",
          summary: "Text to video.",
          input_schema: { type: "object", properties: { prompt: { type: "string" } } },
          fields: { prompt: "prompt" },
          max_duration_seconds: 5,
          pricing: [{ usd_per_second: "0.10" }],
          routes: [{ provider: "box", cost: { usd_per_second: "0.25" }, allow_loss: allowLoss }],
        },
      },
    },
    { file: "catalog.yaml", variable: "REFVID_CATALOG_FILE", env: {} },
  );

describe("routes that lose money", () => {
  it("are warnings outside production, naming the route, its cost and the price", () => {
    expect(checkLosses(losing(false), false, "REFVID_CATALOG_FILE")).toEqual([
      {
        slug: SLUG,
        route: "box",
        tier: "every input",
        price: { unit: "second", unitPrice: 100_000 },
        cost: { unit: "second", unitPrice: 250_000 },
        seconds: null,
        allowed: false,
      },
    ]);
  });

  it("stop a production server unless the route allows the loss", () => {
    expect(() => checkLosses(losing(false), true, "REFVID_CATALOG_FILE")).toThrow(CatalogError);
    expect(() => checkLosses(losing(false), true, "REFVID_CATALOG_FILE")).toThrow(
      `${SLUG} route box costs 0.25 USD/s where the price (every input) is 0.10 USD/s`,
    );
    expect(checkLosses(losing(true), true, "REFVID_CATALOG_FILE")).toHaveLength(1);
  });
});

describe("describeLoss", () => {
  const loss = (price: UnitPrice, cost: UnitPrice, seconds: number | null): RouteLoss => ({
    slug: SLUG,
    route: "box",
    tier: "every input",
    price,
    cost,
    seconds,
    allowed: false,
  });
  it.each<[string, RouteLoss, string]>([
    [
      "per run against per run",
      loss({ unit: "run", unitPrice: 1_250_000 }, { unit: "run", unitPrice: 1_300_000 }, null),
      "costs 1.30 USD a run where the price (every input) is 1.25 USD a run",
    ],
    [
      "per second against per run, at the longest run",
      loss({ unit: "run", unitPrice: 1_250_000 }, { unit: "second", unitPrice: 90_000 }, 15),
      "costs 1.35 USD for a 15 s run (0.09 USD/s) where the price (every input) is 1.25 USD a run",
    ],
    [
      "per run against per second, at the shortest run",
      loss({ unit: "second", unitPrice: 100_000 }, { unit: "run", unitPrice: 400_000 }, 1),
      "costs 0.40 USD a run where the price (every input) is 0.10 USD for a 1 s run (0.10 USD/s)",
    ],
  ])("names both in their units: %s", (_name, given, want) => {
    expect(describeLoss(given)).toBe(`${SLUG} route box ${want}`);
  });
});

describe("the catalog in service", () => {
  const provider = { usesReferences: false } as unknown as Provider;
  const route = (name: string) => ({ name, slot: name, provider, vendor: true });
  const version = (routes: string[]) =>
    new CatalogVersion([
      { model: MODELS["lab-d/model-d/reference-to-video"], builtIn: true, routes: routes.map(route) },
    ]);

  it("keeps a route a reload removed for the runs already on it, and the current one otherwise", () => {
    const files = [version(["old"]), version(["new"])];
    const served = new ServedCatalog(files[0] as CatalogVersion, () => files[1] as CatalogVersion);
    served.reload();
    expect(served.current.get("lab-d/model-d/reference-to-video").routes.map((r) => r.name)).toEqual(["new"]);
    expect(served.route("lab-d/model-d/reference-to-video", "old")?.name).toBe("old");
    expect(served.route("lab-d/model-d/reference-to-video", "new")?.name).toBe("new");
  });

  it("keeps the version in service when a reload is refused", () => {
    const first = version(["a"]);
    const served = new ServedCatalog(first, () => {
      throw new CatalogError("REFVID_CATALOG_FILE: catalog.yaml is not valid");
    });
    expect(() => served.reload()).toThrow(CatalogError);
    expect(served.current).toBe(first);
    expect(() => new ServedCatalog(first).reload()).toThrow(/no catalog file/);
  });

  it("answers 404 model_not_found naming the models served", () => {
    expect(() => version([]).get("acme/none/text-to-video")).toThrow(
      "No model acme/none/text-to-video. Models: lab-d/model-d/reference-to-video.",
    );
  });
});
