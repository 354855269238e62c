/**
 * A model and its input on the `refvid` command line: the word that names a model, and the flag of
 * each input field. The CLI parses with them and the console writes its "Copy as CLI" command with
 * them, so that a command the console copies is one the CLI runs, for any model the server lists.
 */
import type { Model } from "@refvid/api-types";
import { inputPropertiesOf, inputSchemaOf, type PropertySchema, propertyTypeOf } from "./model-schema.js";

/**
 * The long options of `refvid run` and `refvid price` themselves, global ones included: an input
 * field of the same name gets `--input-<name>`, in both commands alike.
 */
export const COMMAND_OPTIONS: ReadonlySet<string> = new Set([
  "json",
  "profile",
  "color",
  "no-color",
  "help",
  "version",
  "input",
  "yes",
  "download",
  "webhook-url",
  "webhook-events",
  "metadata",
]);

/** `aspect_ratio`, `aspectRatio` and `aspect ratio` → `aspect-ratio`. */
export function kebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replace(/[_\s]+/g, "-")
    .toLowerCase();
}

const SCALARS: ReadonlySet<string> = new Set(["string", "integer", "number", "boolean"]);

/**
 * Whether a flag can carry the property's value: a scalar, or a list of scalars (the flag
 * repeated). Others (objects, lists of objects, unions) are set with `--input '{…}'`.
 */
export function hasFlag(property: PropertySchema): boolean {
  const type = propertyTypeOf(property);
  if (type === "array") return SCALARS.has(propertyTypeOf(property.items ?? {}) ?? "string");
  return type !== undefined && SCALARS.has(type);
}

/**
 * The flag of each input field that has one ({@link hasFlag}), without its `--`, in the schema's
 * order: a reference field
 * (`limits.references[].field`) is named after its kind (`image`), any other in kebab-case. A name
 * the command already uses, another field took, or that starts with `no-` (which a parser reads as
 * turning a flag off) gets `input-` before it.
 */
export function inputFlagNames(model: Pick<Model, "input_schema" | "limits">): Map<string, string> {
  const kinds = new Map(model.limits.references.map((r) => [r.field, r.kind]));
  const used = new Set(COMMAND_OPTIONS);
  const names = new Map<string, string>();
  for (const { name: field, schema } of inputPropertiesOf(inputSchemaOf(model))) {
    if (!hasFlag(schema)) continue;
    const kind = kinds.get(field);
    let name = kind && !used.has(kebabCase(kind)) ? kebabCase(kind) : kebabCase(field);
    while (used.has(name) || name.startsWith("no-")) name = `input-${name}`;
    used.add(name);
    names.set(field, name);
  }
  return names;
}

/** `lab-d/model-d/reference-to-video` → `model-d`. */
const modelPart = (slug: string) => slug.split("/")[1];

/**
 * The models that a command-line word names: those whose slug is the word, else whose name is,
 * else whose slug's model part is (`model-d`), else whose lab and model are (`lab-d/model-d`).
 * More than one is a word that needs the slug instead.
 */
export function modelsNamed<M extends Pick<Model, "slug" | "name">>(models: readonly M[], word: string): M[] {
  const ways: ((model: M) => boolean)[] = [
    (m) => m.slug === word,
    (m) => m.name === word,
    (m) => modelPart(m.slug) === word,
    (m) => m.slug.startsWith(`${word}/`),
  ];
  for (const named of ways) {
    const found = models.filter(named);
    if (found.length > 0) return found;
  }
  return [];
}

/**
 * The word to name `model` with on the command line: the first of its name (`model-d`), its slug's
 * model part and its slug that is one word a shell takes as it is and names this model alone.
 */
export function commandNameOf<M extends Pick<Model, "slug" | "name">>(
  model: M,
  models: readonly M[],
): string {
  const namesIt = (word: string) => {
    const named = modelsNamed(models, word);
    return /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(word) && named.length === 1 && named[0]?.slug === model.slug;
  };
  return [model.name, modelPart(model.slug) ?? ""].find(namesIt) ?? model.slug;
}
