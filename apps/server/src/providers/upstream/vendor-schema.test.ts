import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadVendorSchema, type VendorProblem, vendorSchemaFrom } from "./vendor-schema.js";

/** The vendors' files as the example catalog copies them (sources in its README). */
const VENDORS = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../../../../docs/examples/catalog/vendors",
);
const where = "catalog.yaml: models.m.routes[0].vendor_schema";
const vendor = (file: string) => loadVendorSchema(join(VENDORS, file), where);

const SEEDANCE_FAL = "fal/bytedance__seedance-2.0__reference-to-video.input.json";
const SEEDANCE_REPLICATE = "replicate/bytedance__seedance-2.0.input.json";
const KLING_O1_FAL = "fal/fal-ai__kling-video__o1__reference-to-video.input.json";
const VEO_FAL = "fal/fal-ai__veo3.1__reference-to-video.input.json";

const images = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/${i + 1}.png`);

describe("a vendor's published schema, as Ajv reads it", () => {
  it("compiles every copied vendor file, fal's own keywords and all", () => {
    for (const dir of ["fal", "replicate"]) {
      for (const file of readdirSync(join(VENDORS, dir))) {
        expect(vendor(`${dir}/${file}`).source).toBe(join(VENDORS, dir, file));
      }
    }
  });

  const cases: [string, { file: string; given: unknown; want: VendorProblem[] }][] = [
    [
      "takes an input within every limit",
      {
        file: SEEDANCE_FAL,
        given: { prompt: "@Image1 runs", image_urls: images(9), duration: "15", resolution: "720p" },
        want: [],
      },
    ],
    [
      "names a value outside an enum with the values it takes",
      {
        file: SEEDANCE_FAL,
        given: { prompt: "p", duration: "16" },
        want: [
          {
            field: "duration",
            message: "must be one of auto, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15",
            rule: "enum",
          },
        ],
      },
    ],
    [
      "counts the items of a list that is too long",
      {
        file: SEEDANCE_FAL,
        given: { prompt: "p", image_urls: images(10) },
        want: [{ field: "image_urls", message: "has 10 items; at most 9", rule: "maxItems" }],
      },
    ],
    [
      "names a missing required field",
      {
        file: SEEDANCE_FAL,
        given: { image_urls: images(1) },
        want: [{ field: "prompt", message: "is required", rule: "required" }],
      },
    ],
    [
      "puts a nullable field's forms in one message",
      {
        file: SEEDANCE_FAL,
        given: { prompt: "p", end_user_id: 5 },
        want: [{ field: "end_user_id", message: "must be a string or null", rule: "anyOf" }],
      },
    ],
    [
      "reports every problem at once",
      {
        file: SEEDANCE_FAL,
        given: { prompt: "p", generate_audio: "yes", audio_urls: images(4) },
        want: [
          { field: "audio_urls", message: "has 4 items; at most 3", rule: "maxItems" },
          { field: "generate_audio", message: "must be true or false", rule: "type" },
        ],
      },
    ],
    [
      "names a number's maximum",
      {
        file: SEEDANCE_REPLICATE,
        given: { prompt: "p", duration: 20 },
        want: [{ field: "duration", message: "must be at most 15", rule: "maximum" }],
      },
    ],
    [
      "names a number's minimum",
      {
        file: SEEDANCE_REPLICATE,
        given: { prompt: "p", duration: -2 },
        want: [{ field: "duration", message: "must be at least -1", rule: "minimum" }],
      },
    ],
    [
      "wants a whole number where the vendor says integer",
      {
        file: SEEDANCE_REPLICATE,
        given: { prompt: "p", duration: "8" },
        want: [{ field: "duration", message: "must be a whole number", rule: "type" }],
      },
    ],
    [
      "names a field inside a list of objects with its index",
      {
        file: KLING_O1_FAL,
        given: {
          prompt: "p",
          elements: [{ frontal_image_url: "https://x/1.png" }, { reference_image_urls: [] }],
        },
        want: [{ field: "elements[1].frontal_image_url", message: "is required", rule: "required" }],
      },
    ],
    [
      "counts the characters of a text that is too long",
      {
        file: KLING_O1_FAL,
        given: { prompt: "a".repeat(2501) },
        want: [{ field: "prompt", message: "has 2501 characters; at most 2500", rule: "maxLength" }],
      },
    ],
    [
      "names the one value a const field takes",
      {
        file: VEO_FAL,
        given: { prompt: "p", image_urls: images(1), duration: "6s" },
        want: [{ field: "duration", message: "must be 8s", rule: "const" }],
      },
    ],
    [
      "names the root as the empty field",
      {
        file: VEO_FAL,
        given: "a video of a cat",
        want: [{ field: "", message: "must be an object", rule: "type" }],
      },
    ],
  ];

  it.each(cases)("%s", (_name, { file, given, want }) => {
    expect(vendor(file).check(given)).toEqual(want);
  });

  it("never changes the input it checks (no defaults filled in)", () => {
    const input = { prompt: "p" };
    vendor(SEEDANCE_FAL).check(input);
    expect(input).toEqual({ prompt: "p" });
  });
});

describe("vendorSchemaFrom", () => {
  it("reports the problem a nullable list's items have, not that it is not null", () => {
    const schema = vendorSchemaFrom(
      {
        type: "object",
        properties: {
          tags: { anyOf: [{ type: "array", items: { type: "string", maxLength: 3 } }, { type: "null" }] },
        },
      },
      "inline",
    );
    expect(schema.check({ tags: ["abcd", "ok"] })).toEqual([
      { field: "tags[0]", message: "has 4 characters; at most 3", rule: "maxLength" },
    ]);
    expect(schema.check({ tags: null })).toEqual([]);
  });

  it("tells an object's numeric key from a list's index", () => {
    const schema = vendorSchemaFrom(
      {
        type: "object",
        properties: { sizes: { type: "object", additionalProperties: { type: "integer" } } },
      },
      "inline",
    );
    expect(schema.check({ sizes: { "0": "big" } })).toEqual([
      { field: "sizes.0", message: "must be a whole number", rule: "type" },
    ]);
  });

  it("names fields the vendor does not take", () => {
    const schema = vendorSchemaFrom(
      { type: "object", properties: {}, additionalProperties: false },
      "inline",
    );
    expect(schema.check({ seed: 1 })).toEqual([
      { field: "seed", message: "is not a field it takes", rule: "additionalProperties" },
    ]);
  });
});

describe("loadVendorSchema refuses a file it cannot use, naming where and the path", () => {
  const dir = mkdtempSync(join(tmpdir(), "refvid-vendor-schema-"));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it.each([
    ["a missing file", () => join(dir, "missing.json"), "does not exist"],
    ["a file that is not JSON", () => write("broken.json", "{ type: object"), "is not JSON ("],
    ["JSON that is not a schema object", () => write("list.json", "[1, 2]"), "is not a JSON Schema object"],
    [
      "a schema that does not compile",
      () => write("bad.json", JSON.stringify({ type: "strang" })),
      "does not compile (schema is invalid: data/type must be equal to one of the allowed values",
    ],
  ])("%s", (_name, pathOf, message) => {
    const path = pathOf();
    expect(() => loadVendorSchema(path, where)).toThrow(`${where}: vendor schema ${path} ${message}`);
  });
});
