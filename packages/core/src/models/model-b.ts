/** model-b: reference-to-video with image, video and audio references, up to 15 s, one price. */
import type { ModelBInput } from "@refvid/api-types";
import type { BuiltInModel } from "./definition.js";

const PRICE = 56_000;

export const modelB: BuiltInModel<"lab-b/model-b/reference-to-video"> = {
  slug: "lab-b/model-b/reference-to-video",
  name: "model-b",
  summary: "Image, video and audio references, up to 15 s, one price at every resolution.",
  schemaName: "ModelB",
  referenceFields: {
    image: "reference_image_urls",
    video: "reference_video_urls",
    audio: "reference_audio_urls",
  },
  maxTotalReferences: 12,
  audioNeedsVisual: true,
  atCitations: false,
  maxDurationSeconds: 15,
  media: {
    video: { formats: ["mp4", "mov"], minSeconds: 2, maxSeconds: 15, maxTotalSeconds: 15 },
    audio: { formats: ["mp3", "wav"], minSeconds: 2, maxSeconds: 15, maxTotalSeconds: 15 },
  },
  outputFileDetails: true,
  normalize: (b: ModelBInput) => ({
    slug: "lab-b/model-b/reference-to-video",
    prompt: b.prompt,
    duration: b.duration ?? 5,
    resolution: b.resolution ?? "768P",
    aspectRatio: b.aspect_ratio ?? "adaptive",
    generateAudio: (b.reference_audio_urls?.length ?? 0) > 0,
    references: {
      image: b.reference_image_urls ?? [],
      video: b.reference_video_urls ?? [],
      audio: b.reference_audio_urls ?? [],
    },
  }),
  priceTable: [{ tier: "all resolutions", when: {}, unit: "second", unitPrice: PRICE }],
};
