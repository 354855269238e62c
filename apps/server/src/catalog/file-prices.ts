/**
 * Prices and vendor costs in the catalog file (`docs/catalog.md`): a tier gives exactly one of
 * `usd_per_second` and `usd_per_run`; a model's prices are all in one unit, and so are a route's
 * costs; a built-in model stays priced per second. Also which routes cost more than their model's
 * price, like with like (core's `compareCostWithPrice`; docs/decisions.md, "Model catalog"), and
 * what a server does with such routes.
 */
import {
  amountFor,
  type BuiltInModelSlug,
  compareCostWithPrice,
  formatUsd,
  type Micros,
  MODELS,
  type ModelDefinition,
  type PriceTier,
  type PriceUnit,
  parseUsd,
  tierApplies,
  type UnitPrice,
} from "@refvid/core";
import { z } from "zod";
import { CatalogError } from "./catalog-error.js";
import type { CatalogFile } from "./catalog-file.js";

/** A USD amount: a decimal string ("0.30") or a YAML number, read exactly into micro-USD. */
const usd = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const micros = parseUsd(String(value));
  if (micros === null || micros < 0) {
    ctx.addIssue({ code: "custom", message: 'must be an amount of USD, such as "0.30"' });
    return z.NEVER;
  }
  return micros;
});
const when = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** The file's name of each unit's price. */
export const PRICE_FIELD: Readonly<Record<PriceUnit, string>> = {
  second: "usd_per_second",
  run: "usd_per_run",
};

const priced = { usd_per_second: usd.optional(), usd_per_run: usd.optional() };

/** The one price given, with its unit; a problem when both or neither are given. */
function unitPrice(
  given: { usd_per_second?: Micros | undefined; usd_per_run?: Micros | undefined },
  ctx: z.RefinementCtx,
): UnitPrice | undefined {
  const { usd_per_second: perSecond, usd_per_run: perRun } = given;
  if (perSecond !== undefined && perRun !== undefined) {
    ctx.addIssue({ code: "custom", message: "give usd_per_second or usd_per_run, not both" });
    return undefined;
  }
  if (perSecond !== undefined) return { unit: "second", unitPrice: perSecond };
  if (perRun !== undefined) return { unit: "run", unitPrice: perRun };
  ctx.addIssue({
    code: "custom",
    message: 'give a price: usd_per_second ("0.30" per second of output) or usd_per_run ("0.50" per run)',
  });
  return undefined;
}

const tierSchema = z
  .strictObject({ when: when.default({}), ...priced, tier: z.string().min(1).max(100).optional() })
  .transform((tier, ctx) => {
    const price = unitPrice(tier, ctx);
    if (!price) return z.NEVER;
    return { when: tier.when, ...(tier.tier ? { tier: tier.tier } : {}), ...price };
  });

/** A model's prices: a list of tiers, each selected by its `when`. */
export const priceTiersSchema = z.array(tierSchema).min(1, "must list at least one price");

/** A route's cost: one price for every input, or tiers as a model's prices. */
export const costSchema = z.union([
  z.strictObject(priced).transform((cost, ctx) => {
    const price = unitPrice(cost, ctx);
    return price ? [{ when: {}, ...price }] : z.NEVER;
  }),
  priceTiersSchema,
]);

export type FileTier = z.output<typeof tierSchema>;

/** What a vendor charges, per second of output or per run, and the input that selects it. */
export interface CostTier extends UnitPrice {
  when: PriceTier["when"];
}

/** A route that costs more than its model's price for some tier. */
export interface RouteLoss {
  slug: string;
  route: string;
  /** The price tier's label. */
  tier: string;
  price: UnitPrice;
  /** The dearest cost tier that can apply beside the price tier. */
  cost: UnitPrice;
  /** The run length the two were compared at when their units differ; null when unit for unit. */
  seconds: number | null;
  allowed: boolean;
}

type Problem = (path: string, message: string) => void;

/** A catalog model's price table from the file's tiers, all in one unit. */
export function priceTable(tiers: readonly FileTier[], where: string, problem: Problem): PriceTier[] {
  sameUnit(tiers, where, { noun: "price", owner: "model" }, problem);
  return tiers.map((tier) => ({
    tier: tier.tier ?? tierLabel(tier.when),
    when: tier.when,
    unit: tier.unit,
    unitPrice: tier.unitPrice,
  }));
}

/** A route's cost tiers, all in one unit. */
export function costTiers(cost: readonly FileTier[], where: string, problem: Problem): CostTier[] {
  sameUnit(cost, where, { noun: "cost", owner: "route" }, problem);
  return cost.map((tier) => ({ when: tier.when, unit: tier.unit, unitPrice: tier.unitPrice }));
}

/**
 * One unit per table, so a model's pricing has one `unit` in `GET /v1/models` and "the dearest
 * cost" of a route means one thing.
 */
function sameUnit(
  tiers: readonly { unit: PriceUnit }[],
  where: string,
  { noun, owner }: { noun: "price" | "cost"; owner: "model" | "route" },
  problem: Problem,
) {
  const first = tiers[0]?.unit;
  tiers.forEach((tier, i) => {
    if (first !== undefined && tier.unit !== first) {
      problem(
        `${where}[${i}].${PRICE_FIELD[tier.unit]}`,
        `the first ${noun} is per ${first}; a ${owner}'s ${noun}s are all per second or all per run`,
      );
    }
  });
}

/**
 * A built-in model's table with the prices the file gives for its existing tiers. Per second
 * only: the interface prices the built-in models per second, and the typed SDK says so.
 */
export function repriceBuiltIn(
  slug: BuiltInModelSlug,
  given: readonly FileTier[],
  where: string,
  problem: Problem,
): PriceTier[] {
  const model = MODELS[slug];
  const table = model.priceTable.map((tier) => ({ ...tier }));
  given.forEach((tier, i) => {
    const found = table.find((t) => sameWhen(t.when, tier.when));
    if (!found) {
      problem(
        `${where}[${i}].when`,
        `${model.name} has no such tier; its tiers: ${table.map((t) => JSON.stringify(t.when)).join(", ")}`,
      );
    } else if (tier.unit !== "second") {
      problem(
        `${where}[${i}].${PRICE_FIELD[tier.unit]}`,
        `${model.name} is priced per second, as the interface prices it: give usd_per_second`,
      );
    } else found.unitPrice = tier.unitPrice;
  });
  return table;
}

/**
 * Every route whose cost is above its model's price for some price tier: for each tier, the
 * dearest cost tier that can apply beside it (none of their values differ), compared like with
 * like at the run length where the route does worst.
 */
export function routeLosses(
  routes: Partial<Record<string, readonly { name: string; cost?: CostTier[]; allowLoss: boolean }[]>>,
  modelOf: (slug: string) => Pick<ModelDefinition, "priceTable" | "maxDurationSeconds"> | undefined,
): RouteLoss[] {
  const found: RouteLoss[] = [];
  for (const [slug, list] of Object.entries(routes)) {
    const model = modelOf(slug);
    if (!model) continue;
    for (const route of list ?? []) {
      if (!route.cost) continue;
      for (const tier of model.priceTable) {
        const costs = route.cost.filter((cost) => compatible(cost.when, tier.when));
        const dearest = costs.reduce<CostTier | undefined>(
          (most, cost) => (most && most.unitPrice >= cost.unitPrice ? most : cost),
          undefined,
        );
        if (!dearest) continue;
        const cost = { unit: dearest.unit, unitPrice: dearest.unitPrice };
        const price = { unit: tier.unit, unitPrice: tier.unitPrice };
        const compared = compareCostWithPrice(cost, price, model.maxDurationSeconds);
        if (compared.cost > compared.price) {
          found.push({
            slug,
            route: route.name,
            tier: tier.tier,
            price,
            cost,
            seconds: compared.seconds,
            allowed: route.allowLoss,
          });
        }
      }
    }
  }
  return found;
}

/**
 * One line per route that costs more than its model's price: `… route fal costs 0.30 USD/s …`,
 * or, when cost and price count in different units, both for the run length they were compared at.
 */
export function describeLoss(loss: RouteLoss): string {
  const rate = (p: UnitPrice) =>
    p.unit === "second" ? `${formatUsd(p.unitPrice)} USD/s` : `${formatUsd(p.unitPrice)} USD a run`;
  const { seconds } = loss;
  const at = (p: UnitPrice) =>
    seconds === null || p.unit === "run"
      ? rate(p)
      : `${formatUsd(amountFor(p, seconds))} USD for a ${seconds} s run (${rate(p)})`;
  return `${loss.slug} route ${loss.route} costs ${at(loss.cost)} where the price (${loss.tier}) is ${at(loss.price)}${loss.allowed ? " (allow_loss: true)" : ""}`;
}

/**
 * A production server serves no route that loses money on a run unless the route says
 * `allow_loss: true`: a CatalogError listing each such route, else the losses to warn of.
 */
export function checkLosses(file: CatalogFile | null, production: boolean, variable: string): RouteLoss[] {
  const losses = file?.losses ?? [];
  const refused = losses.filter((loss) => production && !loss.allowed);
  if (refused.length > 0) {
    throw new CatalogError(
      `${variable}: ${file?.file} has routes that cost more than their model's price (NODE_ENV=production; set allow_loss: true on a route to serve it anyway):\n${refused.map((loss) => `  ${describeLoss(loss)}`).join("\n")}`,
    );
  }
  return losses;
}

/** `{resolution: 720p, video_references: false}` → "720p, no video input". */
function tierLabel(when: PriceTier["when"]): string {
  const parts = Object.entries(when).map(([key, value]) => {
    const kind = /^(image|video|audio)_references$/.exec(key)?.[1];
    if (kind) return value === true || value === "true" ? `with ${kind} input` : `no ${kind} input`;
    return String(value);
  });
  return parts.join(", ") || "every input";
}

const sameWhen = (a: PriceTier["when"], b: PriceTier["when"]) =>
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([key, value]) => key in b && String(b[key]) === String(value));

const compatible = (a: PriceTier["when"], b: PriceTier["when"]) =>
  tierApplies(
    Object.fromEntries(Object.entries(a).filter(([key]) => key in b)),
    b as Record<string, string | number | boolean>,
  );
