/**
 * The operator's catalog file (`REFVID_CATALOG_FILE`, or the routing file `REFVID_PROVIDERS_FILE`
 * that only routes the built-in models; YAML, or JSON by its name): providers, models and routes,
 * as `docs/catalog.md` describes. Read at boot and on reload: a file with problems is refused with
 * every problem, each named by its path inside the file. Credentials are never in the file:
 * `token_env` names the environment variable that holds one, and it must be set. Providers are
 * read in file-providers.ts, added models in file-models.ts, prices and costs in file-prices.ts;
 * routes, and the file as a whole, here.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { type BuiltInModelSlug, isBuiltInModelSlug, MODELS, type PriceTier } from "@refvid/core";
import { z } from "zod";
import { type CompiledExpression, compileExpression } from "../providers/upstream/mapping.js";
import {
  loadVendorSchema,
  type VendorSchema,
  vendorSchemaFrom,
} from "../providers/upstream/vendor-schema.js";
import { CatalogError } from "./catalog-error.js";
import {
  checkModelSlug,
  type FileModel,
  fileModelSchema,
  type ModelReader,
  readDocument,
  readFileModel,
  schemaSource,
} from "./file-models.js";
import {
  type CostTier,
  costSchema,
  costTiers,
  priceTiersSchema,
  type RouteLoss,
  repriceBuiltIn,
  routeLosses,
} from "./file-prices.js";
import { type ProviderEntry, providerSchema, readProviders, UPSTREAM_TYPES } from "./file-providers.js";

export { CatalogError } from "./catalog-error.js";
export { CATEGORIES, type FileModel } from "./file-models.js";
export { type CostTier, checkLosses, describeLoss, type RouteLoss } from "./file-prices.js";
export {
  type ProviderEntry,
  type ProviderSpec,
  UPSTREAM_TYPES,
  type UpstreamType,
} from "./file-providers.js";

const name = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, . _ -");

const fieldList = z.array(z.string().min(1)).min(1);
const routeSchema = z.strictObject({
  name: name.optional(),
  provider: z.string().min(1),
  model: z.string().min(1).optional(),
  map: z.string().min(1).optional(),
  output: z.string().min(1).optional(),
  vendor_schema: schemaSource.optional(),
  cost: costSchema.optional(),
  allow_loss: z.boolean().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  rename: z.record(z.string(), z.string().min(1)).optional(),
  only: fieldList.optional(),
  omit: fieldList.optional(),
  as_number: fieldList.optional(),
});
const routeList = z.array(routeSchema).min(1, "must list at least one route");

const modelSchema = fileModelSchema.extend({ routes: routeList.optional() });

/** What a file may say of a built-in model: its routes and the prices of its existing tiers. */
const builtInSchema = z.strictObject({ pricing: priceTiersSchema.optional(), routes: routeList.optional() });

const fileSchema = z.strictObject({
  providers: z.record(name, providerSchema).default({}),
  models: z.record(z.string(), z.unknown()).default({}),
  routes: z.record(z.string(), routeList).default({}),
  aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
});

export interface RouteEntry {
  /** Unique within its model; the provider's name unless the file names it. */
  name: string;
  provider: ProviderEntry;
  model?: string;
  /** JSONata: our input (defaults filled in) to the vendor's. */
  map?: CompiledExpression;
  /** JSONata: where the video's URL is in the vendor's output. */
  output?: CompiledExpression;
  /** The vendor's published input schema: a mapped input it refuses never reaches the vendor. */
  vendorSchema?: VendorSchema;
  /** What the vendor charges, per second or per run, by input; absent when the file does not say. */
  cost?: CostTier[];
  allowLoss: boolean;
  input?: Record<string, unknown>;
  rename?: Record<string, string>;
  only?: string[];
  omit?: string[];
  asNumber?: string[];
}

export interface CatalogFile {
  /** The file it was read from, for messages. */
  file: string;
  providers: ProviderEntry[];
  /** The models the file adds, in its order. */
  models: FileModel[];
  /** Routes by model slug, built-in and added models alike. */
  routes: Partial<Record<string, RouteEntry[]>>;
  /** Built-in models the file re-prices: their whole new price table. */
  prices: Partial<Record<BuiltInModelSlug, PriceTier[]>>;
  /** Routes whose cost is above the model's price for some tier. */
  losses: RouteLoss[];
  /** Other names of models for the `/v1/videos` surface's `model` (`sora-2`), by name. */
  aliases: Record<string, string>;
}

export interface CatalogSource {
  file: string;
  /** The environment variable that named the file, for messages. */
  variable: string;
  /** Where `token_env` values are read. */
  env: Record<string, string | undefined>;
}

/** Reads and checks the file; throws a CatalogError naming the file and each problem's path. */
export function loadCatalogFile(source: CatalogSource): CatalogFile {
  const { file, variable } = source;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new CatalogError(`${variable}: cannot read ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = readDocument(text, file);
  } catch (err) {
    throw new CatalogError(`${variable}: ${(err as Error).message}`);
  }
  return parseCatalogFile(raw, source);
}

export function parseCatalogFile(raw: unknown, source: CatalogSource): CatalogFile {
  const reader = new Reader(source);
  const parsed = reader.parse(fileSchema, raw, "");
  if (!parsed) throw reader.error();
  const providers = readProviders(parsed.providers, source.env, reader.problem);
  const catalog: CatalogFile = {
    file: source.file,
    providers: [...providers.values()],
    models: [],
    routes: {},
    prices: {},
    losses: [],
    aliases: {},
  };
  for (const [slug, spec] of Object.entries(parsed.models)) {
    const where = `models.${slug}`;
    if (isBuiltInModelSlug(slug)) {
      const builtIn = reader.parse(builtInSchema, spec, where);
      if (!builtIn) continue;
      if (builtIn.pricing) {
        catalog.prices[slug] = repriceBuiltIn(slug, builtIn.pricing, `${where}.pricing`, reader.problem);
      }
      if (builtIn.routes) catalog.routes[slug] = reader.routes(builtIn.routes, providers, `${where}.routes`);
      continue;
    }
    if (!checkModelSlug(slug, where, reader)) continue;
    const model = reader.parse(modelSchema, spec, where);
    if (!model) continue;
    const added = readFileModel(slug, model, where, reader);
    if (!added) continue;
    catalog.models.push(added);
    if (model.routes) catalog.routes[slug] = reader.routes(model.routes, providers, `${where}.routes`);
  }
  for (const [slug, list] of Object.entries(parsed.routes)) {
    const where = `routes.${slug}`;
    if (!isBuiltInModelSlug(slug) && !catalog.models.some(({ model }) => model.slug === slug)) {
      reader.problem(
        where,
        `not a model (models: ${[...Object.keys(MODELS), ...catalog.models.map(({ model }) => model.slug)].join(", ")})`,
      );
      continue;
    }
    if (catalog.routes[slug]) {
      reader.problem(where, `routes for ${slug} are given twice (here and under models)`);
      continue;
    }
    catalog.routes[slug] = reader.routes(list, providers, where);
  }
  const slugs = [...Object.keys(MODELS), ...catalog.models.map(({ model }) => model.slug)];
  for (const [alias, slug] of Object.entries(parsed.aliases)) {
    if (slugs.includes(alias)) reader.problem(`aliases.${alias}`, "is a model's slug already");
    else if (!slugs.includes(slug))
      reader.problem(`aliases.${alias}`, `${slug} is not a model (models: ${slugs.join(", ")})`);
    else catalog.aliases[alias] = slug;
  }
  reader.throwIfProblems();
  catalog.losses = routeLosses(catalog.routes, (slug) =>
    isBuiltInModelSlug(slug)
      ? { ...MODELS[slug], priceTable: catalog.prices[slug] ?? MODELS[slug].priceTable }
      : catalog.models.find(({ model }) => model.slug === slug)?.model,
  );
  return catalog;
}

/** Collects every problem of a file, each named by its path inside the file. */
class Reader implements ModelReader {
  readonly #problems: string[] = [];
  readonly #dir: string;

  constructor(readonly source: CatalogSource) {
    this.#dir = dirname(resolve(source.file));
  }

  readonly problem = (path: string, message: string): void => {
    this.#problems.push(`${path || "(the file)"}: ${message}`);
  };

  error(): CatalogError {
    return new CatalogError(
      `${this.source.variable}: ${this.source.file} is not valid:\n${this.#problems.map((p) => `  ${p}`).join("\n")}`,
    );
  }

  throwIfProblems(): void {
    if (this.#problems.length > 0) throw this.error();
  }

  parse<T extends z.ZodType>(schema: T, value: unknown, where: string): z.output<T> | undefined {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) this.problem(join(where, issue.path), messageOf(issue));
    return undefined;
  }

  routes(
    list: z.output<typeof routeList>,
    providers: Map<string, ProviderEntry>,
    where: string,
  ): RouteEntry[] {
    const known = [...providers.keys()].join(", ") || "none";
    const entries: RouteEntry[] = [];
    list.forEach((route, i) => {
      const at = `${where}[${i}]`;
      const provider = providers.get(route.provider);
      if (!provider) {
        this.problem(`${at}.provider`, `no provider "${route.provider}" (providers: ${known})`);
        return;
      }
      if ((provider.type === "fal" || provider.type === "replicate") && !route.model) {
        this.problem(`${at}.model`, `required for a ${provider.type} provider (the vendor's model to run)`);
      }
      const routeName = route.name ?? provider.name;
      if (entries.some((e) => e.name === routeName)) {
        this.problem(
          `${at}.name`,
          `another route of this model is named "${routeName}"; give each its own name`,
        );
      }
      const shaping = (["input", "rename", "only", "omit", "as_number"] as const).filter((k) => route[k]);
      if (route.map && shaping.length > 0) {
        this.problem(`${at}.map`, `give either map or ${shaping.join(", ")}, not both`);
      }
      const map = route.map ? this.expression(route.map, `${at}.map`) : undefined;
      const output = route.output ? this.expression(route.output, `${at}.output`) : undefined;
      const vendorSchema = route.vendor_schema
        ? this.vendorSchema(route.vendor_schema, `${at}.vendor_schema`)
        : undefined;
      const cost = route.cost ? costTiers(route.cost, `${at}.cost`, this.problem) : undefined;
      entries.push({
        name: routeName,
        provider,
        allowLoss: route.allow_loss ?? false,
        ...(route.model ? { model: route.model } : {}),
        ...(map ? { map } : {}),
        ...(output ? { output } : {}),
        ...(vendorSchema ? { vendorSchema } : {}),
        ...(cost ? { cost } : {}),
        ...(route.input ? { input: route.input } : {}),
        ...(route.rename ? { rename: route.rename } : {}),
        ...(route.only ? { only: route.only } : {}),
        ...(route.omit ? { omit: route.omit } : {}),
        ...(route.as_number ? { asNumber: route.as_number } : {}),
      });
    });
    return entries;
  }

  expression(source: string, where: string): CompiledExpression | undefined {
    try {
      return compileExpression(source, where);
    } catch (err) {
      this.#problems.push((err as Error).message);
      return undefined;
    }
  }

  vendorSchema(source: string | Record<string, unknown>, where: string): VendorSchema | undefined {
    try {
      return typeof source === "string"
        ? loadVendorSchema(this.path(source), where)
        : vendorSchemaFrom(source, `${this.source.file}#${where}`);
    } catch (err) {
      this.#problems.push((err as Error).message);
      return undefined;
    }
  }

  readonly path = (path: string): string => (isAbsolute(path) ? path : resolve(this.#dir, path));
}

function join(where: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, part) =>
      typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part),
    where,
  );
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_union") {
    const last = issue.path.at(-1);
    if (issue.path[0] === "providers") {
      return `type must be one of ${[...UPSTREAM_TYPES, "preview", "simulated"].join(", ")}`;
    }
    if (last === "cost") {
      return 'must be { usd_per_second: "0.30" }, { usd_per_run: "0.50" }, or a list of { when, usd_per_second or usd_per_run }';
    }
    if (last === "usd_per_second" || last === "usd_per_run")
      return 'must be an amount of USD, such as "0.30"';
    if (last === "input_schema" || last === "vendor_schema") {
      return "must be a path to a JSON Schema file or an inline JSON Schema";
    }
  }
  if (issue.code === "unrecognized_keys")
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`;
  return issue.message;
}
