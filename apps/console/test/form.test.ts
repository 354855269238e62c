/**
 * The schema form's rules and the copied snippets, on model-d's real input schema shape and on a
 * catalog model's, with fields no built-in model has.
 */
import type { InputSchema, Model } from "@refvid/client";
import { describe, expect, it } from "vitest";
import { addLine, fieldsOf, initialValues, inputOf, problemsOf } from "../src/schema.js";
import { cliSnippet, curlSnippet, shellQuote, typescriptSnippet } from "../src/snippets.js";

const schema: InputSchema = {
  required: ["prompt", "image_urls"],
  properties: {
    prompt: { type: "string", minLength: 1, maxLength: 8000 },
    duration: { type: "string", enum: ["4s", "6s", "8s"], default: "8s" },
    image_urls: { type: "array", minItems: 1, maxItems: 2, items: { type: "string", pattern: "^https?://" } },
    seed: { type: ["integer", "null"], minimum: 0, maximum: 10 },
    generate_audio: { type: "boolean", default: true },
  },
};
const fields = fieldsOf(schema);
const model = {
  slug: "lab-d/model-d/reference-to-video",
  name: "model-d",
  run_path: "/v1/run/lab-d/model-d/reference-to-video",
  input_schema: schema,
  limits: { references: [{ kind: "image", field: "image_urls", formats: [] }] },
} as unknown as Model;

describe("the schema form", () => {
  it("draws each property by its type and starts from the defaults", () => {
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["prompt", "longtext", true],
      ["duration", "select", false],
      ["image_urls", "list", true],
      ["seed", "integer", false],
      ["generate_audio", "boolean", false],
    ]);
    expect(initialValues(fields)).toEqual({
      prompt: "",
      duration: "8s",
      image_urls: "",
      seed: "",
      generate_audio: true,
    });
  });

  it("names each problem in words", () => {
    const values = {
      ...initialValues(fields),
      image_urls: "https://a/x.png\nftp://b\nhttps://c",
      seed: "11",
    };
    expect(problemsOf(fields, values)).toEqual({
      prompt: "This field is required.",
      image_urls: "Give at most 2 (3 now).",
      seed: "At most 10.",
    });
    expect(problemsOf(fields, { ...values, image_urls: "ftp://b", seed: "1.5" })).toMatchObject({
      image_urls: "Line 1 must be an http or https URL.",
      seed: "Enter a whole number.",
    });
  });

  it("sends only what differs from the defaults", () => {
    const values = { ...initialValues(fields), prompt: "hi", image_urls: "https://a/x.png\n\n", seed: "3" };
    expect(inputOf(fields, values)).toEqual({ prompt: "hi", image_urls: ["https://a/x.png"], seed: 3 });
    expect(inputOf(fields, { ...values, duration: "4s", generate_audio: false })).toMatchObject({
      duration: "4s",
      generate_audio: false,
    });
  });
});

describe("addLine", () => {
  it.each([
    ["to an empty list", "", "https://a/x.png"],
    ["after the last entry", "https://a/1.png", "https://a/1.png\nhttps://a/x.png"],
    ["after blank lines left at the end", "https://a/1.png\n\n", "https://a/1.png\nhttps://a/x.png"],
    ["to a field not yet set", undefined, "https://a/x.png"],
  ])("adds an uploaded file's URL %s", (_name, text, want) => {
    expect(addLine(text, "https://a/x.png")).toBe(want);
  });
});

describe("the copied request", () => {
  const input = {
    prompt: "it's a cat",
    image_urls: ["https://a/x.png", "https://b/y.png"],
    generate_audio: false,
  };

  it("quotes for a POSIX shell", () => {
    expect(shellQuote("plain-word_1.png")).toBe("plain-word_1.png");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it("as the CLI, names reference fields by kind and booleans as --no-", () => {
    expect(cliSnippet(model, [model], input)).toBe(
      "refvid run model-d --prompt 'it'\\''s a cat' --image https://a/x.png --image https://b/y.png --no-generate-audio",
    );
  });

  it("as curl, posts the input to the model's run path without the key in it", () => {
    const curl = curlSnippet("http://127.0.0.1:8080", model, input);
    expect(curl).toContain("http://127.0.0.1:8080/v1/run/lab-d/model-d/reference-to-video");
    expect(curl).toContain('"Authorization: Key $REFVID_API_KEY"');
    expect(curl).toContain(`-d '{"input":{"prompt":"it'\\''s a cat"`);
  });
});

describe("a catalog model's form", () => {
  const catalogSchema: InputSchema = {
    required: ["prompt", "start_frames"],
    properties: {
      prompt: { type: "string", minLength: 1 },
      start_frames: { type: "array", minItems: 1, items: { type: "string", format: "uri" } },
      seconds: { type: "integer", minimum: 1, maximum: 6, default: 3 },
      fps: { type: "integer", enum: [24, 30] },
      weights: { type: "array", items: { type: "number" } },
      seed: { anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }], default: null },
      camera: { type: "object", default: { move: "dolly" } },
      no_watermark: { type: "boolean", default: false },
    },
  };
  const catalogFields = fieldsOf(catalogSchema);
  const filled = {
    ...initialValues(catalogFields),
    prompt: "A paper boat",
    start_frames: "https://a/x.png",
    fps: "30",
    weights: "0.5\n1",
    seed: "7",
    camera: '{"move": "orbit"}',
    no_watermark: true,
  };

  it("draws number choices as a select, a nullable number as one, and objects as JSON", () => {
    expect(catalogFields.map((f) => [f.name, f.kind])).toEqual([
      ["prompt", "text"],
      ["start_frames", "list"],
      ["seconds", "integer"],
      ["fps", "select"],
      ["weights", "list"],
      ["seed", "integer"],
      ["camera", "json"],
      ["no_watermark", "boolean"],
    ]);
    expect(initialValues(catalogFields)).toMatchObject({
      seconds: "3",
      seed: "",
      camera: '{"move":"dolly"}',
    });
  });

  it("sends numbers as numbers, JSON as what it says, and leaves the defaults out", () => {
    expect(problemsOf(catalogFields, filled)).toEqual({});
    expect(inputOf(catalogFields, filled)).toEqual({
      prompt: "A paper boat",
      start_frames: ["https://a/x.png"],
      fps: 30,
      weights: [0.5, 1],
      seed: 7,
      camera: { move: "orbit" },
      no_watermark: true,
    });
  });

  it("names each problem in words", () => {
    expect(
      problemsOf(catalogFields, {
        ...filled,
        seconds: "9",
        weights: "0.5\nlots",
        seed: "-1",
        camera: "{move",
      }),
    ).toEqual({
      seconds: "At most 6.",
      weights: "Line 2 must be a number.",
      seed: "At least 0.",
      camera: "Enter JSON, e.g. [1, 2] or {}.",
    });
    expect(problemsOf(catalogFields, { ...filled, camera: "[1]" })).toEqual({
      camera: "This field must be an object.",
    });
  });
});

describe("a catalog model's copied request", () => {
  const catalogModel = {
    slug: "acme/clip-maker/image-to-video",
    name: "Clip Maker",
    run_path: "/v1/run/acme/clip-maker/image-to-video",
    input_schema: {
      properties: {
        prompt: { type: "string" },
        start_frames: { type: "array", items: { type: "string" } },
        fps: { type: "integer", enum: [24, 30] },
        no_watermark: { type: "boolean" },
        metadata: { type: "string" },
        camera: { type: "object" },
      },
    },
    limits: { references: [{ kind: "image", field: "start_frames", formats: [] }] },
  } as unknown as Model;
  const input = {
    prompt: "a boat",
    start_frames: ["https://a/x.png"],
    fps: 30,
    no_watermark: true,
    metadata: "x",
    camera: { move: "orbit" },
  };

  it("as the CLI, names the model and each field as the CLI does, objects in --input", () => {
    expect(cliSnippet(catalogModel, [model, catalogModel], input)).toBe(
      "refvid run clip-maker --prompt 'a boat' --image https://a/x.png --fps 30 --input-no-watermark" +
        ` --input-metadata x --input '{"camera":{"move":"orbit"}}'`,
    );
  });

  it("as curl and TypeScript, posts to the model's /v1/run/<slug>", () => {
    expect(curlSnippet("http://127.0.0.1:8080", catalogModel, input)).toContain(
      "http://127.0.0.1:8080/v1/run/acme/clip-maker/image-to-video",
    );
    expect(typescriptSnippet("http://127.0.0.1:8080", catalogModel, input)).toContain(
      'await refvid.run("acme/clip-maker/image-to-video", {',
    );
  });
});
