import { describe, expect, it } from "vitest";
import { MODELS, type ModelInput, type BuiltInModelSlug as ModelSlug, normalizeInput } from "./catalog.js";
import { checkModelRules } from "./model-rules.js";

const A = "lab-a/model-a/reference-to-video";
const B = "lab-b/model-b/reference-to-video";
const C = "lab-c/model-c/reference-to-video";
const D = "lab-d/model-d/reference-to-video";
const urls = (n: number, ext: string) =>
  Array.from({ length: n }, (_, i) => `https://example.com/${i}.${ext}`);

// [name, slug, input, expected problems as "field rule"]
const cases: [string, ModelSlug, ModelInput, string[]][] = [
  [
    "model-a: 50 references are fine",
    A,
    { prompt: "p", image_urls: urls(30, "png"), video_urls: urls(10, "mp4"), audio_urls: urls(10, "mp3") },
    [],
  ],
  [
    "model-a: 51 references in total",
    A,
    { prompt: "p", image_urls: urls(30, "png"), video_urls: urls(10, "mp4"), audio_urls: urls(11, "mp3") },
    ["body.input total_references"],
  ],
  [
    "model-a: audio as the only reference",
    A,
    { prompt: "p", audio_urls: urls(1, "mp3") },
    ["body.input.audio_urls audio_needs_visual_reference"],
  ],
  [
    "model-a: audio beside a video",
    A,
    { prompt: "p", audio_urls: urls(1, "mp3"), video_urls: urls(1, "mp4") },
    [],
  ],
  ["model-a: a prompt with no references", A, { prompt: "a cat" }, []],
  [
    "model-a: citations within the counts",
    A,
    {
      prompt: "@Image2 in @Video1 with @Audio1",
      image_urls: urls(2, "png"),
      video_urls: urls(1, "mp4"),
      audio_urls: urls(1, "mp3"),
    },
    [],
  ],
  [
    "model-a: a citation past the images",
    A,
    { prompt: "@Image3 waves", image_urls: urls(2, "png") },
    ["body.input.prompt citation"],
  ],
  [
    "model-a: @Image0 cites nothing",
    A,
    { prompt: "@Image0 waves", image_urls: urls(2, "png") },
    ["body.input.prompt citation"],
  ],
  [
    "model-b: 12 references are fine",
    B,
    { prompt: "p", reference_image_urls: urls(6, "png"), reference_video_urls: urls(6, "mp4") },
    [],
  ],
  [
    "model-b: 13 references in total",
    B,
    {
      prompt: "p",
      reference_image_urls: urls(5, "png"),
      reference_video_urls: urls(4, "mp4"),
      reference_audio_urls: urls(4, "mp3"),
    },
    ["body.input total_references"],
  ],
  [
    "model-b: audio as the only reference",
    B,
    { prompt: "p", reference_audio_urls: urls(2, "mp3") },
    ["body.input.reference_audio_urls audio_needs_visual_reference"],
  ],
  ["model-b: plain-text citations are not checked", B, { prompt: "Image 3 dances" }, []],
  [
    "model-c: citations within the images",
    C,
    { prompt: "@Image1 meets @Image2", reference_image_urls: urls(2, "png") },
    [],
  ],
  [
    "model-c: a video citation it cannot take",
    C,
    { prompt: "@Image1 like @Video1", reference_image_urls: urls(1, "png") },
    ["body.input.prompt citation"],
  ],
  ["model-d: no cross-field rules", D, { prompt: "@Image9", image_urls: urls(1, "png") }, []],
];

describe("checkModelRules", () => {
  it.each(cases)("%s", (_name, slug, input, want) => {
    const problems = checkModelRules(MODELS[slug], normalizeInput(slug, input));
    expect(problems.map((p) => `${p.field} ${p.rule}`)).toEqual(want);
    for (const p of problems) expect(p.message.length).toBeGreaterThan(10);
  });

  it("names the counts in a citation problem", () => {
    const [problem] = checkModelRules(
      MODELS[A],
      normalizeInput(A, { prompt: "@Video2", video_urls: urls(1, "mp4") }),
    );
    expect(problem?.message).toBe("@Video2 cites video 2 but video_urls has 1");
  });
});
