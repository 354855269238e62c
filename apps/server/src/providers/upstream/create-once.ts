/**
 * Creating a vendor job exactly once. A create call the vendor cannot de-duplicate is never sent
 * again as it was after its answer was lost (`UnansweredCreate`): the adapter first looks for the
 * job it may have made (`find`), adopts it when found, and creates again only when it is sure
 * there is none, or has waited long enough for one to show itself. Every step is written to the
 * run's vendor log; when refvid cannot be sure, the log and a metric say so.
 */
import type { Logger } from "pino";
import type { VendorSide } from "../types.js";
import { UnansweredCreate, VendorError } from "./vendor-http.js";

/** What `find` concluded about a create whose answer was lost. */
export type Found<J> =
  /** The job it made: adopt it. */
  | { job: J }
  /** No job was made (or none can be found): create again. */
  | { none: true; sure: boolean };

export interface CreateOnceOptions<J> {
  /** One create call (`creates: true`): throws `UnansweredCreate` when its answer was lost. */
  create(): Promise<J>;
  /** Looks for the job an unanswered create made (called with when that create was sent). */
  find(sentAt: number, signal: AbortSignal): Promise<Found<J>>;
  /** The vendor job's id, for the log. */
  idOf(job: J): string;
  vendor: VendorSide | undefined;
  now(): number;
  deadline: number;
  signal: AbortSignal;
  log?: Logger | undefined;
}

/** The job of one create, adopted after a lost answer or created again; never two made knowingly. */
export async function createOnce<J>(options: CreateOnceOptions<J>): Promise<{ job: J; adopted: boolean }> {
  const { vendor, signal } = options;
  for (;;) {
    const sentAt = options.now();
    try {
      return { job: await options.create(), adopted: false };
    } catch (err) {
      if (!(err instanceof UnansweredCreate)) throw err;
      signal.throwIfAborted();
      options.log?.warn(
        { err: err.message },
        "the vendor's answer to a create was lost; looking for the job",
      );
      await vendor?.log("create_unanswered", null, err.message);
      const found = await options.find(sentAt, signal);
      if ("job" in found) {
        await vendor?.log("adopted", options.idOf(found.job), null);
        options.log?.info({ upstreamId: options.idOf(found.job) }, "adopted the job of the lost create");
        return { job: found.job, adopted: true };
      }
      if (!found.sure) {
        await vendor?.log(
          "uncertain",
          null,
          "no job of the lost create was found; the vendor may hold one more job for this run",
        );
      }
      if (options.now() >= options.deadline) {
        throw new VendorError(`${err.message}; no time is left to create the job again`, err.status, false);
      }
      await vendor?.log("created_again", null, null);
    }
  }
}

/**
 * Waits up to `windowMs` for a verified webhook of the run naming a vendor job that no other run
 * holds; its id, or null when the window passes.
 */
export async function awaitHookedJob(
  vendor: VendorSide,
  { windowMs, now, signal }: { windowMs: number; now(): number; signal: AbortSignal },
): Promise<string | null> {
  const until = now() + windowMs;
  for (;;) {
    const id = await newHookedJob(vendor, new Set());
    if (id) return id;
    const left = until - now();
    if (left <= 0) return null;
    await vendor.pause(left, signal);
  }
}

/** A job named by the run's verified webhooks, other than `skip`, that no other run holds. */
export async function newHookedJob(vendor: VendorSide, skip: ReadonlySet<string>): Promise<string | null> {
  for (const { upstreamId } of await vendor.hooks()) {
    if (skip.has(upstreamId)) continue;
    if (!(await vendor.heldByAnotherRun(upstreamId))) return upstreamId;
  }
  return null;
}

/**
 * Hands each job the run's webhooks named that is not in `seen` and no other run holds to `take`,
 * after writing it to the run's vendor log as an orphan; `seen` grows by each.
 */
export async function forEachOrphan(
  vendor: VendorSide | undefined,
  seen: Set<string>,
  take: (id: string, vendor: VendorSide) => Promise<void>,
): Promise<void> {
  if (!vendor) return;
  for (let id = await newHookedJob(vendor, seen); id; id = await newHookedJob(vendor, seen)) {
    seen.add(id);
    await vendor.log("orphan", id, null);
    await take(id, vendor);
  }
}
