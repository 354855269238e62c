import { InvalidRequestError, MODELS } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { CatalogVersion, type ServedCatalog } from "../catalog/served-catalog.js";
import { asVideoProblems, checkBuiltInInput, videoInput, videoModel } from "./video-request.js";

const A = "lab-a/model-a/reference-to-video";
const B = "lab-b/model-b/reference-to-video";
const D = "lab-d/model-d/reference-to-video";
const version = new CatalogVersion(
  Object.values(MODELS).map((model) => ({ model, routes: [], builtIn: true })),
  { "sora-2": D },
);
const deps = { catalog: { current: version } as unknown as ServedCatalog };

const mapped = (slug: string, params: { seconds?: string; size?: string }) =>
  videoInput(deps, version.get(slug), slug, { prompt: "p", references: [], ...params });

/** The surface's parameter a request is refused on, and the message. */
function refusal(run: () => unknown): { param: string | undefined; message: string } {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    const [first] = (err as InvalidRequestError).fields;
    return { param: first?.field, message: first?.message ?? "" };
  }
  throw new Error("not refused");
}

describe("the videos surface's model", () => {
  it("is a slug, an alias of the catalog file, or by default the catalog's first model", () => {
    expect(videoModel(version, D)).toMatchObject({ model: D, served: { model: { slug: D } } });
    expect(videoModel(version, "sora-2")).toMatchObject({ model: "sora-2", served: { model: { slug: D } } });
    expect(videoModel(version, undefined)).toMatchObject({ model: A });
    expect(refusal(() => videoModel(version, "sora-3"))).toMatchObject({
      param: "model",
      message: /sora-2, lab-a/,
    });
  });
});

describe("seconds and size on a model's fields", () => {
  it("maps seconds onto a string enum (`8s`), a string of digits (`8`) or a whole number in range", () => {
    expect(mapped(D, { seconds: "8" }).input.duration).toBe("8s");
    expect(mapped(A, { seconds: "12" }).input.duration).toBe("12");
    expect(mapped(B, { seconds: "12" }).input.duration).toBe(12);
    expect(refusal(() => mapped(D, { seconds: "5" }))).toEqual({
      param: "seconds",
      message: 'model-d makes 4, 6, 8 seconds, not "5"',
    });
    expect(refusal(() => mapped(B, { seconds: "16" }))).toMatchObject({
      param: "seconds",
      message: /5 to 15 seconds/,
    });
    expect(refusal(() => mapped(B, { seconds: "7.5" }))).toMatchObject({ param: "seconds" });
  });

  it("maps WIDTHxHEIGHT onto resolution (the shorter side) and aspect ratio, or names size", () => {
    expect(mapped(D, { size: "1920x1080" }).input).toMatchObject({
      resolution: "1080p",
      aspect_ratio: "16:9",
    });
    expect(mapped(D, { size: "720x1280" }).input).toMatchObject({ resolution: "720p", aspect_ratio: "9:16" });
    expect(mapped(B, { size: "768x768" }).input).toMatchObject({ resolution: "768P", aspect_ratio: "1:1" });
    expect(refusal(() => mapped(D, { size: "1024x1792" }))).toMatchObject({
      param: "size",
      message: /1024p/,
    });
    expect(refusal(() => mapped(D, { size: "1280x960" }))).toMatchObject({ param: "size", message: /4:3/ });
    expect(refusal(() => mapped(D, { size: "big" }))).toMatchObject({
      param: "size",
      message: /WIDTHxHEIGHT/,
    });
  });

  it("shows the model's defaults when none are asked: seconds as the surface writes them, size in pixels", () => {
    expect(mapped(D, {})).toMatchObject({ seconds: "8", size: "1280x720" });
    expect(mapped(A, {})).toMatchObject({ seconds: "auto", size: "720p" });
    expect(mapped(B, {})).toMatchObject({ seconds: "5", size: "768p" });
  });

  it("puts each reference in its kind's field, and refuses a kind the model takes none of", () => {
    const video = videoInput(deps, version.get(D), D, {
      prompt: "p",
      references: [
        { kind: "image", url: "https://example.com/a.png", param: "input_reference" },
        { kind: "image", url: "https://example.com/b.png", param: "input_references" },
      ],
    });
    expect(video.input.image_urls).toEqual(["https://example.com/a.png", "https://example.com/b.png"]);
    const audio = {
      kind: "audio" as const,
      url: "https://example.com/a.mp3",
      param: "input_references" as const,
    };
    expect(
      refusal(() => videoInput(deps, version.get(D), D, { prompt: "p", references: [audio] })),
    ).toMatchObject({
      param: "input_references",
      message: "model-d takes no audio reference",
    });
  });

  it("checks a built-in model's input against its schema and names the surface's parameters", () => {
    const video = mapped(D, { seconds: "4", size: "1280x720" });
    expect(refusal(() => checkBuiltInInput(deps, video))).toMatchObject({ param: "image_urls" });
    const withImage = { ...video, input: { ...video.input, image_urls: ["https://example.com/a.png"] } };
    expect(checkBuiltInInput(deps, withImage)).toMatchObject({ generate_audio: true, duration: "4s" });
    const problems = asVideoProblems(
      [{ field: "body.input.duration", message: "must be at most 15 seconds", rule: "maximum" }],
      video.params,
    );
    expect(problems.fields[0]?.field).toBe("seconds");
  });
});
