/** A model and its fields on the `refvid` command line, for the built-in models and catalog ones. */
import type { Model } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { commandNameOf, inputFlagNames, kebabCase, modelsNamed } from "./command-line.js";

/** A model as `GET /v1/models` lists it, with the parts these functions read. */
function model(slug: string, name: string, properties: string[] = [], references: [string, string][] = []) {
  return {
    slug,
    name,
    input_schema: { properties: Object.fromEntries(properties.map((p) => [p, { type: "string" }])) },
    limits: { references: references.map(([kind, field]) => ({ kind, field, formats: [] })) },
  } as unknown as Model;
}

const MODEL_D = model("lab-d/model-d/reference-to-video", "model-d");
const CLIP_I2V = model("acme/clip-maker/image-to-video", "Clip Maker");
const CLIP_T2V = model("acme/clip-maker/text-to-video", "Clip Maker (text)");
const SEEDANCE = model("bytedance/seedance-2.0/reference-to-video", "Seedance 2.0");
const KLING = model("kwaivgi/kling-o1/reference-to-video", "kling");
const MODELS = [MODEL_D, CLIP_I2V, CLIP_T2V, SEEDANCE, KLING];

describe("the word that names a model", () => {
  it.each<[string, Model[]]>([
    ["lab-d/model-d/reference-to-video", [MODEL_D]],
    ["model-d", [MODEL_D]],
    ["lab-d/model-d", [MODEL_D]],
    ["Seedance 2.0", [SEEDANCE]],
    ["seedance-2.0", [SEEDANCE]],
    ["kling", [KLING]],
    ["kling-o1", [KLING]],
    ["acme/clip-maker/text-to-video", [CLIP_T2V]],
    ["clip-maker", [CLIP_I2V, CLIP_T2V]],
    ["acme/clip-maker", [CLIP_I2V, CLIP_T2V]],
    ["acme", [CLIP_I2V, CLIP_T2V]],
    ["bytedance", [SEEDANCE]],
    ["model-z", []],
  ])("%s names the models it should", (word, expected) => {
    expect(modelsNamed(MODELS, word)).toEqual(expected);
  });

  it.each<[Model, string]>([
    [MODEL_D, "model-d"],
    [SEEDANCE, "seedance-2.0"],
    [KLING, "kling"],
    [CLIP_I2V, "acme/clip-maker/image-to-video"],
    [CLIP_T2V, "acme/clip-maker/text-to-video"],
  ])("names %s on the command line as %s", (m, expected) => {
    expect(commandNameOf(m, MODELS)).toBe(expected);
    expect(modelsNamed(MODELS, expected)).toEqual([m]);
  });

  it("names a model by its slug when its name would be taken for a flag", () => {
    const dashed = model("acme/x/text-to-video", "-x");
    expect(commandNameOf(dashed, [dashed, model("acme2/x/text-to-video", "y")])).toBe("acme/x/text-to-video");
  });
});

describe("the flag of each field", () => {
  it.each<[string, string]>([
    ["aspect_ratio", "aspect-ratio"],
    ["negativePrompt", "negative-prompt"],
    ["end user id", "end-user-id"],
    ["seconds", "seconds"],
  ])("writes %s as %s", (field, expected) => {
    expect(kebabCase(field)).toBe(expected);
  });

  it("names references after their kind, and each field once", () => {
    const m = model(
      "acme/clip-maker/image-to-video",
      "Clip Maker",
      ["prompt", "start_frames", "image", "last_frames", "cameraSpeed"],
      [
        ["image", "start_frames"],
        ["image", "last_frames"],
      ],
    );
    expect(Object.fromEntries(inputFlagNames(m))).toEqual({
      prompt: "prompt",
      start_frames: "image",
      image: "input-image",
      last_frames: "last-frames",
      cameraSpeed: "camera-speed",
    });
  });

  it("gives a flag to scalars and lists of them, not to objects or unions", () => {
    const m = {
      ...model("acme/x/text-to-video", "x"),
      input_schema: {
        properties: {
          seconds: { type: "integer" },
          seed: { anyOf: [{ type: "integer" }, { type: "null" }] },
          frames: { type: "array", items: { type: "string" } },
          weights: { type: "array", items: { type: "number" } },
          elements: { type: "array", items: { type: "object" } },
          camera: { type: "object" },
          duration: { anyOf: [{ type: "integer" }, { const: "auto" }] },
        },
      },
    } as Model;
    expect([...inputFlagNames(m).keys()]).toEqual(["seconds", "seed", "frames", "weights"]);
  });

  it("moves a field off the commands' own options and off --no-", () => {
    const m = model("acme/x/text-to-video", "x", [
      "json",
      "yes",
      "metadata",
      "no_audio",
      "input",
      "input_yes",
    ]);
    expect(Object.fromEntries(inputFlagNames(m))).toEqual({
      json: "input-json",
      yes: "input-yes",
      metadata: "input-metadata",
      no_audio: "input-no-audio",
      input: "input-input",
      input_yes: "input-input-yes",
    });
  });
});
