/**
 * `GET /v1/models` and `GET /v1/models/{slug}`: each model of the catalog in service with its input
 * schema (a built-in model's from the spec, every `$ref` resolved), its limits and its price table,
 * described once per catalog version.
 */
import type { components } from "@refvid/api-types";
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { formatUsd, unitOfTable } from "@refvid/core";
import type { CatalogVersion, ServedModel } from "../catalog/served-catalog.js";
import type { AppDeps } from "../deps.js";

type Model = components["schemas"]["Model"];
type ModelList = components["schemas"]["ModelList"];

const described = new WeakMap<CatalogVersion, ModelList>();

/** Every model of the catalog in service. */
export function listModels(deps: Pick<AppDeps, "catalog">): ModelList {
  const version = deps.catalog.current;
  let list = described.get(version);
  if (!list) {
    const schemas = loadOpenapiDocument().components.schemas ?? {};
    list = { data: version.models.map((served) => describeModel(served, schemas)) };
    described.set(version, list);
  }
  return list;
}

/** The model with this slug; a 404 `model_not_found` for any other. */
export function getModel(deps: Pick<AppDeps, "catalog">, slug: string): Model {
  deps.catalog.current.get(slug);
  return listModels(deps).data.find((model) => model.slug === slug) as Model;
}

function describeModel(served: ServedModel, schemas: Record<string, unknown>): Model {
  const { model } = served;
  const slug = model.slug as Model["slug"];
  return {
    slug,
    name: model.name,
    summary: model.summary,
    run_path: `/v1/run/${slug}`,
    input_schema: inputSchemaOf(served, schemas),
    limits: {
      max_duration_seconds: model.maxDurationSeconds,
      max_total_references: model.maxTotalReferences ?? null,
      references: Object.entries(model.referenceFields).map(([kind, field]) => {
        const media = model.media[kind as keyof typeof model.media];
        return {
          kind,
          field,
          formats: [...(media?.formats ?? [])],
          ...(media?.maxBytes !== undefined ? { max_bytes: media.maxBytes } : {}),
          ...(media?.minSeconds !== undefined ? { min_seconds: media.minSeconds } : {}),
          ...(media?.maxSeconds !== undefined ? { max_seconds: media.maxSeconds } : {}),
          ...(media?.maxTotalSeconds !== undefined ? { max_total_seconds: media.maxTotalSeconds } : {}),
        };
      }),
    },
    pricing: {
      currency: "usd",
      unit: unitOfTable(model.priceTable),
      tiers: model.priceTable.map((tier) => ({
        tier: tier.tier,
        when: { ...tier.when },
        ...(tier.unit === "run"
          ? { usd_per_run: formatUsd(tier.unitPrice) }
          : { usd_per_second: formatUsd(tier.unitPrice) }),
      })),
    },
  };
}

/**
 * A catalog model's input schema as the operator wrote it (its own `$defs` and `$ref`s intact);
 * a built-in model's from the spec, with the spec's references resolved.
 */
function inputSchemaOf(served: ServedModel, schemas: Record<string, unknown>): Record<string, unknown> {
  if (served.input) return served.input.schema;
  const name = `${served.model.schemaName}Input`;
  if (!schemas[name]) throw new Error(`the spec has no ${name} schema for ${served.model.slug}`);
  return resolveRefs(schemas[name], schemas, []) as Record<string, unknown>;
}

/** A copy of `schema` with each `#/components/schemas/…` reference replaced by what it names. */
function resolveRefs(schema: unknown, schemas: Record<string, unknown>, seen: string[]): unknown {
  if (Array.isArray(schema)) return schema.map((item) => resolveRefs(item, schemas, seen));
  if (!schema || typeof schema !== "object") return schema;
  const { $ref, ...rest } = schema as Record<string, unknown>;
  if (typeof $ref === "string") {
    const name = $ref.replace(/^#\/components\/schemas\//, "");
    if (seen.includes(name) || !(name in schemas)) throw new Error(`cannot resolve ${$ref} in a model input`);
    // Sibling keywords (a description beside the $ref) override the referenced schema's.
    const target = resolveRefs(schemas[name], schemas, [...seen, name]) as Record<string, unknown>;
    return { ...target, ...(resolveRefs(rest, schemas, seen) as Record<string, unknown>) };
  }
  return Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, resolveRefs(v, schemas, seen)]));
}
