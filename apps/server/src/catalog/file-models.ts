/**
 * The models a catalog file adds (`docs/catalog.md`, "Models"): the slug, the input schema
 * (inline, or a JSON or YAML file beside the catalog file), which input fields mean prompt,
 * duration and the rest, the reference limits and the prices. Each becomes a ModelDefinition whose
 * `normalize` reads a schema-valid input as the built-in models' requests are read.
 */
import { readFileSync } from "node:fs";
import {
  type MediaLimits,
  type ModelDefinition,
  type NormalizedRequest,
  REFERENCE_KINDS,
  type ReferenceKind,
} from "@refvid/core";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { DEFAULT_FORMATS } from "../media/limits.js";
import { priceTable, priceTiersSchema } from "./file-prices.js";
import { compileInputSchema, type InputSchema } from "./input-schema.js";

export const CATEGORIES = ["reference-to-video", "image-to-video", "text-to-video"] as const;

/** A JSON Schema: a path to a JSON or YAML file, relative to the catalog file, or inline. */
export const schemaSource = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);

const mediaSchema = z.strictObject({
  field: z.string().min(1),
  formats: z.array(z.string()).min(1).optional(),
  max_bytes: z.number().int().positive().optional(),
  min_seconds: z.number().positive().optional(),
  max_seconds: z.number().positive().optional(),
  max_total_seconds: z.number().positive().optional(),
});

/** An added model as the file gives it, less its routes (the catalog file adds those). */
export const fileModelSchema = z.strictObject({
  name: z.string().min(1).max(100),
  summary: z.string().min(1).max(300),
  input_schema: schemaSource,
  fields: z.strictObject({
    prompt: z.string().min(1),
    duration: z.string().min(1).optional(),
    resolution: z.string().min(1).optional(),
    aspect_ratio: z.string().min(1).optional(),
    generate_audio: z.string().min(1).optional(),
  }),
  max_duration_seconds: z.number().int().positive().max(3600),
  references: z
    .strictObject({
      image: mediaSchema.optional(),
      video: mediaSchema.optional(),
      audio: mediaSchema.optional(),
    })
    .default({}),
  max_total_references: z.number().int().positive().optional(),
  audio_needs_visual: z.boolean().default(false),
  citations: z.enum(["at", "none"]).default("none"),
  pricing: priceTiersSchema,
});

type FileModelSpec = z.output<typeof fileModelSchema>;

/** A model the file adds: its definition and its input schema. */
export interface FileModel {
  model: ModelDefinition;
  input: InputSchema;
}

/** What reading a model needs of the file's reader. */
export interface ModelReader {
  /** Records a problem at a path inside the file. */
  readonly problem: (path: string, message: string) => void;
  /** A path the file gives, resolved against the file's folder. */
  readonly path: (path: string) => string;
}

/** A JSON or YAML document (JSON when the file's name ends in .json); throws saying why not. */
export function readDocument(text: string, file: string): unknown {
  const json = /\.json$/i.test(file);
  try {
    return json ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new Error(
      `${file} is not valid ${json ? "JSON" : "YAML"}: ${(err as Error).message.split("\n")[0]}`,
    );
  }
}

/** Whether `slug` can name an added model (`<lab>/<model>/<category>`); a problem when not. */
export function checkModelSlug(slug: string, where: string, reader: Pick<ModelReader, "problem">): boolean {
  const parts = slug.split("/");
  const ok =
    parts.length === 3 &&
    parts.every((part) => /^[a-z0-9][a-z0-9._-]*$/.test(part)) &&
    (CATEGORIES as readonly string[]).includes(parts[2] as string);
  if (!ok) {
    reader.problem(
      where,
      `a model slug is <lab>/<model>/<category>: lowercase letters, digits, . _ -, and a category of ${CATEGORIES.join(", ")}`,
    );
  }
  return ok;
}

/** The model the file adds as `slug`, or undefined when it has problems (each recorded). */
export function readFileModel(
  slug: string,
  spec: FileModelSpec,
  where: string,
  reader: ModelReader,
): FileModel | undefined {
  const schema = inputSchemaOf(spec.input_schema, `${where}.input_schema`, reader);
  if (!schema) return undefined;
  let input: InputSchema;
  try {
    input = compileInputSchema(schema, slug);
  } catch (err) {
    reader.problem(`${where}.input_schema`, `is not a JSON Schema: ${(err as Error).message}`);
    return undefined;
  }
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const named = (field: string, path: string) => {
    if (!(field in properties)) reader.problem(path, `"${field}" is not a property of the input schema`);
  };
  for (const [meaning, field] of Object.entries(spec.fields)) named(field, `${where}.fields.${meaning}`);
  const media: Partial<Record<ReferenceKind, MediaLimits>> = {};
  const referenceFields: Partial<Record<ReferenceKind, string>> = {};
  for (const kind of REFERENCE_KINDS) {
    const limits = spec.references[kind];
    if (!limits) continue;
    named(limits.field, `${where}.references.${kind}.field`);
    const known: readonly string[] = DEFAULT_FORMATS[kind];
    limits.formats?.forEach((format, i) => {
      if (!known.includes(format)) {
        reader.problem(
          `${where}.references.${kind}.formats[${i}]`,
          `not a ${kind} format refvid reads (${known.join(", ")})`,
        );
      }
    });
    referenceFields[kind] = limits.field;
    media[kind] = {
      formats: limits.formats ?? DEFAULT_FORMATS[kind],
      ...(limits.max_bytes ? { maxBytes: limits.max_bytes } : {}),
      ...(limits.min_seconds ? { minSeconds: limits.min_seconds } : {}),
      ...(limits.max_seconds ? { maxSeconds: limits.max_seconds } : {}),
      ...(limits.max_total_seconds ? { maxTotalSeconds: limits.max_total_seconds } : {}),
    };
  }
  const fields = spec.fields;
  const model: ModelDefinition<Record<string, unknown>> = {
    slug,
    name: spec.name,
    summary: spec.summary,
    referenceFields,
    ...(spec.max_total_references ? { maxTotalReferences: spec.max_total_references } : {}),
    audioNeedsVisual: spec.audio_needs_visual,
    atCitations: spec.citations === "at",
    maxDurationSeconds: spec.max_duration_seconds,
    ...(fields.duration ? { durationField: fields.duration } : {}),
    fieldNames: fields,
    media,
    outputFileDetails: true,
    normalize: (values) => normalizeFileInput(slug, fields, referenceFields, values),
    priceTable: priceTable(spec.pricing, `${where}.pricing`, reader.problem),
  };
  return { model: model as ModelDefinition, input };
}

/** A JSON Schema given inline or as a path (JSON or YAML) relative to the file. */
function inputSchemaOf(
  source: z.output<typeof schemaSource>,
  where: string,
  reader: ModelReader,
): Record<string, unknown> | undefined {
  if (typeof source !== "string") return source;
  const path = reader.path(source);
  try {
    const value = readDocument(readFileSync(path, "utf8"), path);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
    reader.problem(where, `${path} does not hold a JSON Schema object`);
  } catch (err) {
    reader.problem(where, `cannot read ${path}: ${(err as Error).message}`);
  }
  return undefined;
}

/** Reads a schema-valid input of a file model (defaults filled in) as a NormalizedRequest. */
function normalizeFileInput(
  slug: string,
  fields: FileModelSpec["fields"],
  referenceFields: Partial<Record<ReferenceKind, string>>,
  input: Record<string, unknown>,
): NormalizedRequest {
  const text = (field: string | undefined) => {
    const value = field === undefined ? undefined : input[field];
    return typeof value === "string" || typeof value === "number" ? String(value) : "";
  };
  const urls = (kind: ReferenceKind) => {
    const field = referenceFields[kind];
    const value = field === undefined ? undefined : input[field];
    if (Array.isArray(value)) return value.filter((url): url is string => typeof url === "string");
    return typeof value === "string" ? [value] : [];
  };
  const values: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      values[key] = value;
  }
  const audio = fields.generate_audio === undefined ? undefined : input[fields.generate_audio];
  return {
    slug,
    prompt: text(fields.prompt),
    duration: durationOf(fields.duration === undefined ? undefined : input[fields.duration]),
    resolution: text(fields.resolution),
    aspectRatio: text(fields.aspect_ratio),
    generateAudio: audio !== false,
    references: { image: urls("image"), video: urls("video"), audio: urls("audio") },
    values,
  };
}

/** 8, "8", "8s" → 8 whole seconds (a fraction rounds up); anything else (`auto`, absent) → auto. */
function durationOf(value: unknown): number | "auto" {
  const number =
    typeof value === "number" ? value : Number(/^\s*(\d+(?:\.\d+)?)/.exec(String(value ?? ""))?.[1]);
  return Number.isFinite(number) && number > 0 ? Math.ceil(number) : "auto";
}
