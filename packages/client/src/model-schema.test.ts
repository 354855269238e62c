/** Reading a model's input schema and its rules, on the shapes of the real models' schemas. */
import { describe, expect, it } from "vitest";
import {
  fieldOfProblem,
  type InputSchema,
  inputPropertiesOf,
  inputSchemaOf,
  isUrlSchema,
  type PropertySchema,
  plainProperty,
  propertyTypeOf,
  type SchemaProblem,
  schemaProblem,
} from "./model-schema.js";

const REFERENCE_URL: PropertySchema = {
  type: "string",
  format: "uri",
  pattern: "^https?://",
  maxLength: 2048,
};
const schema: InputSchema = {
  required: ["prompt", "image_urls"],
  properties: {
    prompt: { type: "string", minLength: 1, maxLength: 8000 },
    duration: { type: "string", enum: ["4s", "6s", "8s"], default: "8s" },
    image_urls: { type: "array", minItems: 1, maxItems: 2, items: REFERENCE_URL },
    seed: { type: ["integer", "null"], minimum: 0, maximum: 10 },
    guidance: { type: "number", minimum: 0.5 },
    generate_audio: { type: "boolean", default: true },
    extra: { type: "object" },
  },
};
const properties = schema.properties as Record<string, PropertySchema>;

describe("reading the schema", () => {
  it("lists the properties in order, each marked required or not", () => {
    const model = { input_schema: schema as Record<string, unknown> };
    expect(inputPropertiesOf(inputSchemaOf(model)).map((p) => [p.name, p.required])).toEqual([
      ["prompt", true],
      ["duration", false],
      ["image_urls", true],
      ["seed", false],
      ["guidance", false],
      ["generate_audio", false],
      ["extra", false],
    ]);
    expect(inputPropertiesOf({})).toEqual([]);
  });

  it.each<[string, PropertySchema, PropertySchema]>([
    [
      "a nullable union, as Pydantic and fal write an optional field",
      { title: "Seed", anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }], description: "d" },
      { title: "Seed", type: "integer", minimum: 0, description: "d" },
    ],
    [
      "the keywords beside the union over its branch's",
      { oneOf: [{ type: "null" }, { type: "string", default: "a" }], default: "b" },
      { type: "string", default: "b" },
    ],
    [
      "a null default, as not set",
      { anyOf: [{ type: "string" }, { type: "null" }], default: null },
      { type: "string" },
    ],
    [
      "a null choice, which a tool cannot send",
      { type: ["string", "null"], enum: ["film", "anime", null] },
      { type: ["string", "null"], enum: ["film", "anime"] },
    ],
    [
      "an enum of strings without a type",
      { enum: ["16:9", "9:16"] },
      { type: "string", enum: ["16:9", "9:16"] },
    ],
    ["an enum of whole numbers without a type", { enum: [5, 10] }, { type: "integer", enum: [5, 10] }],
    ["an enum of numbers without a type", { enum: [0.5, 1] }, { type: "number", enum: [0.5, 1] }],
    ["an enum of mixed values, as it is", { enum: ["auto", 5] }, { enum: ["auto", 5] }],
    [
      "a list's items",
      { type: "array", items: { anyOf: [{ type: "string", format: "uri" }, { type: "null" }] } },
      { type: "array", items: { type: "string", format: "uri" } },
    ],
    [
      "a union of two types, as it is",
      { anyOf: [{ type: "integer" }, { type: "string" }] },
      { anyOf: [{ type: "integer" }, { type: "string" }] },
    ],
  ])("reads %s plainly", (_name, property, expected) => {
    expect(plainProperty(property)).toEqual(expected);
  });

  it("gives each property plainly", () => {
    const nullable = { properties: { seed: { anyOf: [{ type: "integer" }, { type: "null" }] } } };
    expect(inputPropertiesOf(nullable)).toEqual([
      { name: "seed", schema: { type: "integer" }, required: false },
    ]);
  });

  it.each<[PropertySchema, string | undefined]>([
    [{ type: "string" }, "string"],
    [{ type: ["integer", "null"] }, "integer"],
    [{ type: ["null", "boolean"] }, "boolean"],
    [{}, undefined],
  ])("reads the type of %j as %s", (property, expected) => {
    expect(propertyTypeOf(property)).toBe(expected);
  });

  it.each<[PropertySchema, boolean]>([
    [REFERENCE_URL, true],
    [{ type: "string", pattern: "^https?://" }, true],
    [{ type: "string", format: "uri" }, true],
    [{ type: "string", pattern: "^[a-z]+$" }, false],
  ])("tells a URL property: %j is %s", (property, expected) => {
    expect(isUrlSchema(property)).toBe(expected);
  });
});

describe("the rules a value breaks", () => {
  it.each<[string, unknown, SchemaProblem | undefined]>([
    ["prompt", "a cat", undefined],
    ["prompt", "", { rule: "minLength", limit: 1, actual: 0 }],
    ["prompt", "x".repeat(8001), { rule: "maxLength", limit: 8000, actual: 8001 }],
    ["prompt", 7, { rule: "type", expected: "string" }],
    ["duration", "6s", undefined],
    ["duration", "5s", { rule: "enum", allowed: ["4s", "6s", "8s"] }],
    ["image_urls", ["https://a/x.png"], undefined],
    ["image_urls", "https://a/x.png", { rule: "type", expected: "array" }],
    ["image_urls", [], { rule: "minItems", limit: 1, actual: 0 }],
    ["image_urls", ["https://a", "https://b", "https://c"], { rule: "maxItems", limit: 2, actual: 3 }],
    [
      "image_urls",
      ["https://a/x.png", "ftp://b"],
      { rule: "item", index: 1, item: "ftp://b", problem: { rule: "url" } },
    ],
    ["image_urls", ["https://"], { rule: "item", index: 0, item: "https://", problem: { rule: "url" } }],
    ["seed", 3, undefined],
    ["seed", 1.5, { rule: "type", expected: "integer" }],
    ["seed", "3", { rule: "type", expected: "integer" }],
    ["seed", -1, { rule: "minimum", limit: 0 }],
    ["seed", 11, { rule: "maximum", limit: 10 }],
    ["guidance", 0.75, undefined],
    ["guidance", 0.25, { rule: "minimum", limit: 0.5 }],
    ["generate_audio", false, undefined],
    ["generate_audio", "no", { rule: "type", expected: "boolean" }],
    ["extra", { any: "thing" }, undefined],
    ["extra", ["thing"], { rule: "type", expected: "object" }],
    ["extra", null, { rule: "type", expected: "object" }],
  ])("%s = %j breaks %j", (name, value, expected) => {
    expect(schemaProblem(properties[name] as PropertySchema, value)).toEqual(expected);
  });

  it("checks a pattern as JSON Schema does, with Unicode semantics", () => {
    const code: PropertySchema = { type: "string", pattern: "^\\p{Lu}{2}$" };
    expect(schemaProblem(code, "FR")).toBeUndefined();
    expect(schemaProblem(code, "fr")).toEqual({ rule: "pattern", pattern: "^\\p{Lu}{2}$" });
  });
});

describe("the input field a problem names", () => {
  it("finds the input field a server problem names", () => {
    expect(fieldOfProblem("body.input.audio_urls")).toBe("audio_urls");
    expect(fieldOfProblem("body.input.image_urls[0]")).toBe("image_urls");
    expect(fieldOfProblem("body.metadata.x")).toBeUndefined();
  });

  it.each([
    ["input.seed", "seed"],
    ["body.input", undefined],
    ["body.endpoint", undefined],
  ])("reads %s as %s", (path, expected) => {
    expect(fieldOfProblem(path)).toBe(expected);
  });
});
