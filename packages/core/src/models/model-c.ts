/** model-c: image references only, up to 15 s, 480p or 720p. */
import type { ModelCInput } from "@refvid/api-types";
import { type BuiltInModel, tiersByResolution } from "./definition.js";

const PRICES = { "480p": 35_000, "720p": 49_000 } as const;

export const modelC: BuiltInModel<"lab-c/model-c/reference-to-video"> = {
  slug: "lab-c/model-c/reference-to-video",
  name: "model-c",
  summary: "Image references only, up to 15 s, 480p or 720p.",
  schemaName: "ModelC",
  referenceFields: { image: "reference_image_urls" },
  audioNeedsVisual: false,
  atCitations: true,
  maxDurationSeconds: 15,
  media: {},
  outputFileDetails: false,
  normalize: (c: ModelCInput) => ({
    slug: "lab-c/model-c/reference-to-video",
    prompt: c.prompt,
    duration: c.duration ?? 6,
    resolution: c.resolution ?? "720p",
    aspectRatio: c.aspect_ratio ?? "16:9",
    generateAudio: true,
    references: { image: c.reference_image_urls, video: [], audio: [] },
  }),
  priceTable: tiersByResolution(PRICES),
};
