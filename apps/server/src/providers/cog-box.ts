/**
 * Predictions left running on a Cog box: a run stopped (cancelled, timed out) while its held
 * request was open, from the cancel until the prediction ended. Cog may not cancel it: Cog 0.12
 * serves nothing while a held sync prediction runs, so the cancel goes unanswered, or is answered
 * 404 once the prediction ran to its end (see test/vendors/cog-server.ts); another Cog may accept a
 * cancel and run on. While one is left on a box, this process starts no prediction there (the run
 * waits in the queue), and `/readyz` shows the box busy with one Cog did not cancel. Also what
 * this process learned of each box's server: that it answered an async create synchronously (its
 * predictions are then held requests, cog.ts), and whether a probe can see its predictions in
 * flight (coglet reattaches a PUT of an id in flight before reading its input; Cog ≤ 0.16 reads the
 * input first, so a probe's refusal tells nothing). Kept per process, by the box's URL.
 */
import type { Clock, Scheduler } from "../clock.js";

export interface UncancellablePrediction {
  predictionId: string;
  /** When Cog was found not to cancel it. */
  since: Date;
}

/** A prediction left on a box, until `ended`. */
export interface LeftPrediction {
  /** Cog did not cancel it: uncancellable now, or `afterMs` from now if it still runs then. */
  uncancellable(afterMs?: number): void;
  /** It ended (or the box went away): the box is free of it. */
  ended(): void;
}

interface Left {
  id: string;
  uncancellable: Date | null;
}

/** What a process learned of a box's server. */
interface Server {
  /** When it answered a prediction created async with its end (it does not take `Prefer`). */
  answersSync: Date | null;
  /** Whether a probe sees a prediction in flight (null: not known yet). */
  probesSee: boolean | null;
}

export class CogBoxes {
  private readonly boxes = new Map<string, Set<Left>>();
  private readonly servers = new Map<string, Server>();

  /** Records `id` as running on the box until the returned handle's `ended`. */
  leave(url: string, id: string, time: { clock: Clock; scheduler: Scheduler }): LeftPrediction {
    const key = boxKey(url);
    const left: Left = { id, uncancellable: null };
    const entries = this.boxes.get(key) ?? new Set<Left>();
    this.boxes.set(key, entries.add(left));
    let offTimer = () => {};
    return {
      uncancellable: (afterMs = 0) => {
        offTimer();
        const mark = () => {
          if (entries.has(left)) left.uncancellable ??= time.clock.now();
        };
        if (afterMs > 0) offTimer = time.scheduler.setTimeout(mark, afterMs);
        else mark();
      },
      ended: () => {
        offTimer();
        entries.delete(left);
        if (entries.size === 0 && this.boxes.get(key) === entries) this.boxes.delete(key);
      },
    };
  }

  /** Whether the box runs a prediction left by a stopped run, other than `except`. */
  busy(url: string, except?: string): boolean {
    return [...(this.boxes.get(boxKey(url)) ?? [])].some((left) => left.id !== except);
  }

  /** The box's prediction that Cog did not cancel (the longest known), or null. */
  uncancellable(url: string): UncancellablePrediction | null {
    let oldest: UncancellablePrediction | null = null;
    for (const { id, uncancellable } of this.boxes.get(boxKey(url)) ?? []) {
      if (uncancellable && (!oldest || uncancellable < oldest.since)) {
        oldest = { predictionId: id, since: uncancellable };
      }
    }
    return oldest;
  }

  /** The box answered a prediction asked async with its end, `at`: its predictions are held from now on. */
  answeredSync(url: string, at: Date): void {
    this.server(url).answersSync ??= at;
  }

  /** When the box was found to answer async predictions synchronously, or null. */
  answersSync(url: string): Date | null {
    return this.servers.get(boxKey(url))?.answersSync ?? null;
  }

  /** Whether a probe of the box sees a prediction in flight, as found; null while not known. */
  probesSee(url: string): boolean | null {
    return this.servers.get(boxKey(url))?.probesSee ?? null;
  }

  learnProbes(url: string, see: boolean): void {
    this.server(url).probesSee = see;
  }

  private server(url: string): Server {
    const key = boxKey(url);
    const server = this.servers.get(key) ?? { answersSync: null, probesSee: null };
    this.servers.set(key, server);
    return server;
  }
}

/** This process's Cog boxes: the adapters record on it, `/readyz` reads it. */
export const cogBoxes = new CogBoxes();

function boxKey(url: string): string {
  return URL.canParse(url) ? new URL(url).href.replace(/\/+$/, "") : url;
}
