/**
 * How a request of the `/v1/videos` surface becomes a run's input: `model` names a catalog model
 * by slug or by an alias of the catalog file; `seconds` and `size` map onto the model's duration,
 * resolution and aspect ratio fields; references go to the model's reference field of their kind.
 * A value the model cannot take is a `400` naming the surface's own parameter (`seconds`, `size`),
 * never the model's field it would have become.
 */
import { type FieldProblem, InvalidRequestError, type ReferenceKind } from "@refvid/core";
import { compileInputSchema, type InputSchema } from "../catalog/input-schema.js";
import type { CatalogVersion, ServedModel } from "../catalog/served-catalog.js";
import type { AppDeps } from "../deps.js";
import { fieldNamesOf } from "../views/video-view.js";
import { getModel } from "./models.js";

/** One reference, with the surface's parameter it came from (for errors). */
export interface VideoReference {
  kind: ReferenceKind;
  url: string;
  param: "input_reference" | "input_references";
}

export interface VideoParams {
  prompt: string;
  model?: string;
  seconds?: string;
  size?: string;
  references: VideoReference[];
}

/** A run's input for the request, and the surface's `seconds` and `size` as the video shows them. */
export interface VideoInput {
  served: ServedModel;
  /** The name the client gave, or the slug of the default model. */
  model: string;
  input: Record<string, unknown>;
  seconds: string;
  size: string;
  /** The surface's parameter behind each input field, for the errors of the run's checks. */
  params: Map<string, string>;
}

type Property = {
  enum?: unknown[];
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
};

const problem = (param: string, message: string): InvalidRequestError =>
  new InvalidRequestError([{ field: param, message, rule: "video" }]);

/** The model `name` means: an alias, a slug, or (none given) the catalog's first model. */
export function videoModel(
  catalog: CatalogVersion,
  name: string | undefined,
): { served: ServedModel; model: string } {
  if (name === undefined || name === "") {
    const first = catalog.models[0];
    if (!first) throw problem("model", "is required: this server serves no model");
    return { served: first, model: first.model.slug };
  }
  const served = catalog.find(catalog.aliases[name] ?? name);
  if (!served) {
    const names = [...Object.keys(catalog.aliases), ...catalog.catalog.slugs];
    throw problem("model", `${JSON.stringify(name)} is not a model here; use one of ${names.join(", ")}`);
  }
  return { served, model: name };
}

/** Maps the request onto the model's input (not yet checked against the model's schema). */
export function videoInput(
  deps: Pick<AppDeps, "catalog">,
  served: ServedModel,
  model: string,
  params: VideoParams,
): VideoInput {
  const { model: definition } = served;
  const properties = (getModel(deps, definition.slug).input_schema.properties ?? {}) as Record<
    string,
    Property
  >;
  const fields = fieldNamesOf(definition);
  const input: Record<string, unknown> = { [fields.prompt]: params.prompt };
  const map = new Map<string, string>([[fields.prompt, "prompt"]]);

  const duration = properties[fields.duration];
  if (params.seconds !== undefined) {
    if (!duration)
      throw problem("seconds", `${definition.name} makes videos of one length; leave seconds out`);
    input[fields.duration] = durationValue(duration, params.seconds, definition.name);
  }
  map.set(fields.duration, "seconds");

  const resolution = properties[fields.resolution];
  const aspect = properties[fields.aspectRatio];
  if (params.size !== undefined)
    Object.assign(input, sizeValues(params.size, fields, resolution, aspect, definition.name));
  map.set(fields.resolution, "size");
  map.set(fields.aspectRatio, "size");

  for (const reference of params.references) {
    const field = definition.referenceFields[reference.kind];
    if (!field) {
      throw problem(reference.param, `${definition.name} takes no ${reference.kind} reference`);
    }
    const list = (input[field] as string[] | undefined) ?? [];
    list.push(reference.url);
    input[field] = list;
    map.set(field, reference.param);
  }
  return {
    served,
    model,
    input,
    seconds: params.seconds ?? secondsOf(duration?.default),
    size: params.size ?? defaultSize(resolution?.default, aspect?.default),
    params: map,
  };
}

/** The model's duration value for `seconds`: an enum member (`"8"`, `"8s"`) or a whole number in range. */
function durationValue(property: Property, seconds: string, name: string): string | number {
  if (property.enum) {
    const found = property.enum.find((value) => String(value) === seconds || String(value) === `${seconds}s`);
    if (found !== undefined) return found as string | number;
    const lengths = property.enum.map((value) => String(value).replace(/s$/, ""));
    throw problem("seconds", `${name} makes ${lengths.join(", ")} seconds, not ${JSON.stringify(seconds)}`);
  }
  const value = Number(seconds);
  const min = property.minimum ?? 1;
  const max = property.maximum ?? Number.POSITIVE_INFINITY;
  if (/^\d+$/.test(seconds) && value >= min && value <= max) return value;
  throw problem(
    "seconds",
    `${name} makes ${min} to ${max} seconds, in whole seconds, not ${JSON.stringify(seconds)}`,
  );
}

/** The model's resolution and aspect ratio for `WIDTHxHEIGHT`. */
function sizeValues(
  size: string,
  fields: ReturnType<typeof fieldNamesOf>,
  resolution: Property | undefined,
  aspect: Property | undefined,
  name: string,
): Record<string, unknown> {
  const match = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  if (!match) throw problem("size", `must be WIDTHxHEIGHT, such as 1280x720, not ${JSON.stringify(size)}`);
  const width = Number(match[1]);
  const height = Number(match[2]);
  // A size sets both; a model that cannot choose one of them cannot make it as asked.
  if (!resolution?.enum || !aspect?.enum) {
    const fixed =
      !resolution?.enum && !aspect?.enum
        ? "one size"
        : !resolution?.enum
          ? "one resolution"
          : "one aspect ratio";
    throw problem("size", `${name} makes ${fixed}; leave size out`);
  }
  const lines = `${Math.min(width, height)}p`;
  const found = resolution.enum.find((value) => String(value).toLowerCase() === lines);
  if (found === undefined) {
    throw problem("size", `${name} makes ${resolution.enum.join(", ")} videos; ${size} is ${lines}`);
  }
  const divisor = gcd(width, height);
  const ratio = `${width / divisor}:${height / divisor}`;
  if (!aspect.enum.includes(ratio)) {
    const ratios = aspect.enum.filter((value) => /^\d+:\d+$/.test(String(value)));
    throw problem("size", `${name} makes the aspect ratios ${ratios.join(", ")}; ${size} is ${ratio}`);
  }
  return { [fields.resolution]: found, [fields.aspectRatio]: ratio };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

const secondsOf = (value: unknown) => (value === undefined ? "auto" : String(value).replace(/s$/, ""));

/** The model's default size: `1280x720` from `720p` and `16:9`, or the resolution alone. */
function defaultSize(resolution: unknown, aspect: unknown): string {
  const lines = typeof resolution === "string" ? Number.parseInt(resolution, 10) : Number.NaN;
  const ratio = typeof aspect === "string" ? /^(\d+):(\d+)$/.exec(aspect) : null;
  if (Number.isNaN(lines)) return typeof aspect === "string" ? aspect : "auto";
  if (!ratio) return `${lines}p`;
  const [w, h] = [Number(ratio[1]), Number(ratio[2])];
  const even = (n: number) => Math.round(n / 2) * 2;
  return w >= h ? `${even((lines * w) / h)}x${lines}` : `${lines}x${even((lines * h) / w)}`;
}

const builtInSchemas = new WeakMap<CatalogVersion, Map<string, InputSchema>>();

/**
 * Checks a built-in model's input against its spec schema (the run API has the OpenAPI validator
 * do it; this surface is outside it), filling in the defaults. A catalog model's input is checked
 * by the submit itself.
 */
export function checkBuiltInInput(
  deps: Pick<AppDeps, "catalog">,
  video: VideoInput,
): Record<string, unknown> {
  if (!video.served.builtIn) return video.input;
  const version = deps.catalog.current;
  let schemas = builtInSchemas.get(version);
  if (!schemas) {
    schemas = new Map();
    builtInSchemas.set(version, schemas);
  }
  const slug = video.served.model.slug;
  let schema = schemas.get(slug);
  if (!schema) {
    schema = compileInputSchema(getModel(deps, slug).input_schema, slug);
    schemas.set(slug, schema);
  }
  const checked = schema.check(video.input);
  if (checked.problems.length > 0) throw asVideoProblems(checked.problems, video.params);
  return checked.input;
}

/** The run's field problems in the surface's terms: `body.input.duration` is `seconds`. */
export function asVideoProblems(
  problems: readonly FieldProblem[],
  params: Map<string, string>,
): InvalidRequestError {
  return new InvalidRequestError(
    problems.map((p) => {
      const field = p.field.replace(/^body\.input\./, "").replace(/^body\./, "");
      const top = field.split(".")[0] ?? field;
      return { ...p, field: params.get(top) ?? field };
    }),
  );
}
