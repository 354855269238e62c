/**
 * Input rules the OpenAPI schema cannot express (interface, "Input of model-a/b/c"): totals across
 * fields, audio never the only reference, and prompt citations naming references that exist.
 * Rules that need the downloaded files (formats, sizes, durations) run in the worker's preflight.
 */
import type { ModelDefinition, NormalizedRequest, ReferenceKind } from "./catalog.js";

/** One problem with one field; `field` is a dotted path from the request root. */
export interface FieldProblem {
  field: string;
  message: string;
  rule: string;
}

const CITATION = /@(Image|Video|Audio)(\d+)/g;
const KIND_OF: Record<string, ReferenceKind> = { Image: "image", Video: "video", Audio: "audio" };

/** Every cross-field problem of a schema-valid request; empty when it may be admitted. */
export function checkModelRules(
  model: ModelDefinition,
  request: NormalizedRequest,
  fieldPrefix = "body.input",
): FieldProblem[] {
  const counts = {
    image: request.references.image.length,
    video: request.references.video.length,
    audio: request.references.audio.length,
  };
  const problems: FieldProblem[] = [];
  const total = counts.image + counts.video + counts.audio;
  if (model.maxTotalReferences !== undefined && total > model.maxTotalReferences) {
    problems.push({
      field: fieldPrefix,
      message: `${listFields(model)} together hold ${total} files; ${model.name} takes at most ${model.maxTotalReferences}`,
      rule: "total_references",
    });
  }
  if (model.audioNeedsVisual && counts.audio > 0 && counts.image + counts.video === 0) {
    const visual = [model.referenceFields.image, model.referenceFields.video].filter(Boolean).join(" or ");
    problems.push({
      field: `${fieldPrefix}.${model.referenceFields.audio}`,
      message: `audio cannot be the only reference; add ${visual}`,
      rule: "audio_needs_visual_reference",
    });
  }
  if (model.atCitations) {
    for (const [token, label, number] of request.prompt.matchAll(CITATION)) {
      const kind = KIND_OF[label as string] as ReferenceKind;
      const n = Number(number);
      if (n >= 1 && n <= counts[kind]) continue;
      const field = model.referenceFields[kind];
      problems.push({
        field: `${fieldPrefix}.prompt`,
        message: field
          ? `${token} cites ${kind} ${n} but ${field} has ${counts[kind]}`
          : `${token} cites a ${kind} reference, which ${model.name} does not take`,
        rule: "citation",
      });
    }
  }
  return problems;
}

function listFields(model: ModelDefinition): string {
  return Object.values(model.referenceFields).join(", ");
}
