/** The schema form's rules and the copied snippets, on model-d's real input schema shape. */
import type { InputSchema, Model } from "@refvid/client";
import { describe, expect, it } from "vitest";
import { fieldsOf, initialValues, inputOf, problemsOf } from "../src/schema.js";
import { cliSnippet, curlSnippet, shellQuote } from "../src/snippets.js";

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
    expect(cliSnippet(model, input)).toBe(
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
