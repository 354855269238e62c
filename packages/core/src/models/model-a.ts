/** model-a: multimodal reference-to-video, up to 30 s, 480p to 1080p, native audio. */
import type { ModelAInput } from "@refvid/api-types";
import { type BuiltInModel, MB, tiersByResolution } from "./definition.js";

/** Per-second prices by resolution; with video references every tier is 0.6x. */
const PRICES = {
  plain: { "480p": 72_000, "720p": 162_000, "1080p": 398_000 },
  withVideo: { "480p": 43_000, "720p": 97_000, "1080p": 239_000 },
} as const;

export const modelA: BuiltInModel<"lab-a/model-a/reference-to-video"> = {
  slug: "lab-a/model-a/reference-to-video",
  name: "model-a",
  summary: "Multimodal references (images, video, audio), up to 30 s, 480p to 1080p, native audio.",
  schemaName: "ModelA",
  referenceFields: { image: "image_urls", video: "video_urls", audio: "audio_urls" },
  maxTotalReferences: 50,
  audioNeedsVisual: true,
  atCitations: true,
  maxDurationSeconds: 30,
  media: {
    image: { formats: ["jpeg", "png", "webp", "bmp", "tiff", "gif", "heic", "heif"], maxBytes: 30 * MB },
    video: {
      formats: ["mp4", "mov"],
      maxBytes: 200 * MB,
      minSeconds: 1.8,
      maxSeconds: 30.2,
      maxTotalSeconds: 30.2,
    },
    audio: { formats: ["mp3", "wav"], minSeconds: 1.8, maxSeconds: 30.2, maxTotalSeconds: 30.2 },
  },
  outputFileDetails: true,
  normalize: (a: ModelAInput) => ({
    slug: "lab-a/model-a/reference-to-video",
    prompt: a.prompt,
    duration: a.duration === undefined || a.duration === "auto" ? "auto" : Number(a.duration),
    resolution: a.resolution ?? "720p",
    aspectRatio: a.aspect_ratio ?? "auto",
    generateAudio: a.generate_audio ?? true,
    references: { image: a.image_urls ?? [], video: a.video_urls ?? [], audio: a.audio_urls ?? [] },
  }),
  priceTable: [
    ...tiersByResolution(PRICES.plain, { label: "no video input", when: { video_references: false } }),
    ...tiersByResolution(PRICES.withVideo, { label: "with video input", when: { video_references: true } }),
  ],
};
