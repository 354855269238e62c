/** model-d: image references only, 4 to 8 s, 720p or 1080p. */
import type { ModelDInput } from "@refvid/api-types";
import { type BuiltInModel, tiersByResolution } from "./definition.js";

const PRICES = { "720p": 71_000, "1080p": 106_000 } as const;

export const modelD: BuiltInModel<"lab-d/model-d/reference-to-video"> = {
  slug: "lab-d/model-d/reference-to-video",
  name: "model-d",
  summary: "Image references only, 4 to 8 s, 720p or 1080p.",
  schemaName: "ModelD",
  referenceFields: { image: "image_urls" },
  audioNeedsVisual: false,
  atCitations: false,
  maxDurationSeconds: 8,
  media: {},
  outputFileDetails: true,
  normalize: (d: ModelDInput) => ({
    slug: "lab-d/model-d/reference-to-video",
    prompt: d.prompt,
    duration: Number.parseInt(d.duration ?? "8s", 10),
    resolution: d.resolution ?? "720p",
    aspectRatio: d.aspect_ratio ?? "16:9",
    generateAudio: d.generate_audio ?? true,
    references: { image: d.image_urls, video: [], audio: [] },
  }),
  priceTable: tiersByResolution(PRICES),
};
