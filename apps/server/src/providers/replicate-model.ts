/**
 * What a Replicate route names and gets back: the model or version predictions are created on
 * (and whether a listed prediction is of it), the video among a prediction's outputs, and a
 * prediction read from an answer, the fields a refused input names, and a prediction's error as a
 * sentence.
 */
import { VendorError, type VendorResponse } from "./upstream/vendor-http.js";

/** Where predictions of a route's `model` are created. */
export type ReplicateTarget =
  | { kind: "model"; owner: string; name: string }
  | { kind: "version"; id: string };

const NAME = "[A-Za-z0-9][A-Za-z0-9._-]*";
const MODEL = new RegExp(`^(${NAME})/(${NAME})$`);
const VERSION = new RegExp(`^(?:${NAME}/${NAME}:)?([A-Za-z0-9]+)$`);

/** Reads a route's `model`; throws naming the accepted forms. */
export function replicateTarget(model: string): ReplicateTarget {
  const official = MODEL.exec(model);
  if (official?.[1] && official[2]) return { kind: "model", owner: official[1], name: official[2] };
  const version = VERSION.exec(model);
  if (version?.[1]) return { kind: "version", id: version[1] };
  throw new Error(`Replicate model "${model}" is not owner/name, owner/name:version or a version id`);
}

/** Whether a listed prediction is of the route's model or version. */
export function isOfTarget(target: ReplicateTarget, prediction: Record<string, unknown>): boolean {
  if (target.kind === "version") return prediction.version === target.id;
  return prediction.model === `${target.owner}/${target.name}`;
}

const VIDEO_PATH = /\.(mp4|mov|m4v)$/i;

/** The output URL, or the first video of a list of URLs (the first URL when none looks like one). */
export function firstVideo(output: unknown): unknown {
  if (!Array.isArray(output)) return output;
  const urls = output.filter((value): value is string => typeof value === "string" && value !== "");
  return urls.find(isVideoUrl) ?? urls[0];
}

function isVideoUrl(value: string): boolean {
  try {
    return VIDEO_PATH.test(new URL(value).pathname);
  } catch {
    return false;
  }
}

/** A prediction's `error` as a sentence: usually a string, sometimes an object. */
function errorText(error: unknown): string | null {
  if (typeof error === "string") return error.trim().slice(0, 500) || null;
  if (error === null || error === undefined) return null;
  return JSON.stringify(error).slice(0, 500);
}

/** A prediction as refvid reads it from Replicate's answers. */
export interface Prediction {
  id: string;
  status: string;
  output: unknown;
  error: unknown;
  logs: unknown;
  dataRemoved: boolean;
}

/** The prediction in an API answer; one without an id or a status is the vendor's error. */
export function predictionOf(provider: string, answer: VendorResponse, what: string): Prediction {
  const body = answer.body as Record<string, unknown> | null;
  const id = body && typeof body === "object" ? body.id : undefined;
  const status = body && typeof body === "object" ? body.status : undefined;
  if (typeof id !== "string" || id === "" || typeof status !== "string") {
    throw new VendorError(
      `${provider} answered ${what} without a prediction (HTTP ${answer.status})`,
      answer.status,
      false,
    );
  }
  return {
    id,
    status,
    output: body?.output,
    error: body?.error,
    logs: body?.logs,
    dataRemoved: body?.data_removed === true,
  };
}

/** Each field a 422 "Input validation failed" names, as `field: description` (Replicate's `invalid_fields`). */
export function invalidFields(body: unknown): string[] {
  const fields = (body as { invalid_fields?: unknown } | null)?.invalid_fields;
  if (!Array.isArray(fields)) return [];
  return fields.flatMap((entry) => {
    const { field, description } = (entry ?? {}) as { field?: unknown; description?: unknown };
    if (typeof description !== "string") return [];
    return [typeof field === "string" && field !== "" ? `${field}: ${description}` : description];
  });
}

/**
 * Why a prediction that ended without a video ended (`failed`, `canceled`, `aborted`); null while
 * it goes on (`starting`, `processing`, or a state Replicate adds).
 */
export function endedMessage(provider: string, prediction: Prediction): string | null {
  const why = errorText(prediction.error);
  const said = why ? `: ${why}` : "";
  switch (prediction.status) {
    case "failed":
      return `${provider} prediction ${prediction.id} failed: ${why ?? "no message"}`;
    case "canceled":
      return `${provider} prediction ${prediction.id} was canceled upstream, not by refvid${said}`;
    case "aborted":
      return `${provider} prediction ${prediction.id} was aborted by Replicate before it ran${said}`;
    default:
      return null;
  }
}
