/**
 * `GET /v1/models` and `GET /v1/models/{slug}`: each model's input schema (from the spec, every
 * `$ref` resolved), its limits (from core) and its price table (from core), built once at startup.
 */
import type { components } from "@refvid/api-types";
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { formatUsd, isModelSlug, MODEL_SLUGS, MODELS, type ModelSlug, NotFoundError } from "@refvid/core";

type Model = components["schemas"]["Model"];
type ModelList = components["schemas"]["ModelList"];

export interface ModelCatalog {
  list(): ModelList;
  /** The model with this slug; a 404 `model_not_found` for any other. */
  get(slug: string): Model;
}

export function modelCatalog(): ModelCatalog {
  const schemas = loadOpenapiDocument().components.schemas ?? {};
  const models = new Map<ModelSlug, Model>(MODEL_SLUGS.map((slug) => [slug, describeModel(slug, schemas)]));
  const list: ModelList = { data: [...models.values()] };
  return {
    list: () => list,
    get(slug) {
      const model = isModelSlug(slug) ? models.get(slug) : undefined;
      if (!model) throw modelNotFound(slug);
      return model;
    },
  };
}

export const modelNotFound = (slug: string) =>
  new NotFoundError("model_not_found", `No model ${slug}. Models: ${MODEL_SLUGS.join(", ")}.`);

function describeModel(slug: ModelSlug, schemas: Record<string, unknown>): Model {
  const model = MODELS[slug];
  const inputSchema = schemas[`${model.schemaName}Input`];
  if (!inputSchema) throw new Error(`the spec has no ${model.schemaName}Input schema for ${slug}`);
  return {
    slug,
    name: model.name,
    summary: model.summary,
    run_path: `/v1/run/${slug}`,
    input_schema: resolveRefs(inputSchema, schemas, []) as Record<string, unknown>,
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
      unit: "second",
      tiers: model.priceTable.map((tier) => ({
        tier: tier.tier,
        when: { ...tier.when },
        usd_per_second: formatUsd(tier.unitPrice),
      })),
    },
  };
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
