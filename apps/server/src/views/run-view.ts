/** Turns a stored run into the interface's Run object (interface, "Run object"). */
import type { components, Run } from "@refvid/api-types";
import { formatUsd, isBuiltInModelSlug, MODELS, type QueueEstimate, type Range } from "@refvid/core";
import type { RunOutputFile, RunRecord } from "@refvid/store";
import type { FileUrlSigner } from "../files/signed-urls.js";
import { unitField } from "./price-unit.js";
import { videoVariantFileId } from "./video-variant.js";

type Video = components["schemas"]["Video"];

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A model's category, the last part of its slug: `reference-to-video`, `image-to-video`… */
const categoryOf = (slug: string) => slug.slice(slug.lastIndexOf("/") + 1);

/** A queued run's place in the queue (services/queue-standing.ts), shown while it waits. */
export interface QueuePlace {
  position: number;
  estimate: QueueEstimate | null;
}

const range = (r: Range) => ({ p50: r.p50.toISOString(), p90: r.p90.toISOString() });

/** A run's video as the API shows it, its poster's URL included for every model (a refvid extension). */
function toApiVideo(run: RunRecord, output: RunOutputFile, signer: FileUrlSigner, now: Date): Video {
  const thumbnail = videoVariantFileId(output, "thumbnail");
  return {
    url: signer.url(output.fileId, now),
    // Only model-c's output leaves them out (interface, "Run object"); catalog models have them.
    ...(!isBuiltInModelSlug(run.endpoint) || MODELS[run.endpoint].outputFileDetails
      ? { file_name: output.fileName, content_type: output.contentType }
      : {}),
    ...(thumbnail ? { thumbnail_url: signer.url(thumbnail, now) } : {}),
  };
}

export function toApiRun(run: RunRecord, signer: FileUrlSigner, now: Date, queue?: QueuePlace | null): Run {
  const terminal = run.completedAt !== null;
  const video = run.output ? toApiVideo(run, run.output, signer, now) : null;
  return {
    run_id: run.id,
    environment: run.environment,
    endpoint: run.endpoint as Run["endpoint"],
    model: categoryOf(run.endpoint),
    capability: "video",
    mode: categoryOf(run.endpoint),
    status: run.status,
    output: video ? { videos: [video] } : null,
    error: run.error,
    billing: terminal
      ? {
          amount: formatUsd(run.charged ?? 0),
          currency: "usd",
          unit_price: formatUsd(run.unitPrice),
          billable_seconds: run.billableSeconds ?? 0,
          ...unitField(run.priceUnit),
        }
      : null,
    metadata: run.metadata,
    progress: run.progress,
    ...(run.status === "processing" && typeof run.queuePosition === "number"
      ? { queue_position: run.queuePosition }
      : {}),
    ...(run.status === "queued" && queue
      ? {
          queue_position: queue.position,
          ...(queue.estimate
            ? { estimated_start_at: range(queue.estimate.start), estimated_end_at: range(queue.estimate.end) }
            : {}),
        }
      : {}),
    created_at: run.createdAt.toISOString(),
    started_at: iso(run.startedAt),
    completed_at: iso(run.completedAt),
    elapsed_ms: run.completedAt ? run.completedAt.getTime() - run.createdAt.getTime() : null,
  };
}

/** The Run as operators see it (`AdminRun`): who made it, and the route and vendor cost of its end. */
export function toAdminRun(
  run: RunRecord,
  signer: FileUrlSigner,
  now: Date,
): components["schemas"]["AdminRun"] {
  return {
    ...toApiRun(run, signer, now),
    organization_id: run.organizationId,
    api_key_id: run.apiKeyId,
    route: run.route,
    vendor_cost_usd: run.vendorCost === null ? null : formatUsd(run.vendorCost),
  };
}
