/**
 * Sync submits waiting for their runs' ends: one table per process rather than a loop per request.
 * A run's end (from this process or, through the store's events, another) wakes its waiters; a
 * backstop pass every `backstopMs` reads the runs waited on longest, so a missed event costs
 * latency, never the answer. Ten thousand held submits then cost one listener and one timer, not
 * ten thousand of each (docs/decisions.md, "Hot path").
 */

import type { Run } from "@refvid/api-types";
import { isTerminal } from "@refvid/core";
import { isConnectionLost } from "@refvid/store";
import type { CancelTimer } from "../clock.js";
import type { AppDeps } from "../deps.js";
import { toApiRun } from "../views/run-view.js";

interface Waiter {
  organizationId: string;
  resolve: (run: Run | null) => void;
  reject: (err: unknown) => void;
}

/** Between backstop passes. */
const BACKSTOP_MS = 1000;
/**
 * Runs one backstop pass reads at most, the longest waited-on first: with ten thousand waiting,
 * each is still read every minute or so, and a pass stays small. Ends are announced by events; the
 * backstop is for the rare one that was missed (after a lost subscription everything is re-checked
 * at once).
 */
const BACKSTOP_RUNS = 200;

export class RunEndWaits {
  private readonly waiting = new Map<string, Waiter[]>();
  private cancelBackstop: CancelTimer | undefined;

  constructor(
    private readonly deps: AppDeps,
    private readonly shutdown: AbortSignal,
    private readonly backstopMs = BACKSTOP_MS,
  ) {
    deps.events.on("ended", (runId) => {
      if (runId === undefined) void this.check([...this.waiting.keys()]);
      else if (this.waiting.has(runId)) void this.check([runId]);
    });
    shutdown.addEventListener("abort", () => this.endAll(), { once: true });
  }

  /**
   * The run once it is terminal; null when the server shuts down first. A store call that lost its
   * connection is tried again at the next pass (the answer's headers are out already); any other
   * failure to read the run rejects, so the request is ended rather than left hanging.
   */
  wait(organizationId: string, runId: string): Promise<Run | null> {
    if (this.shutdown.aborted) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const waiter = { organizationId, resolve, reject };
      const waiters = this.waiting.get(runId);
      if (waiters) waiters.push(waiter);
      else this.waiting.set(runId, [waiter]);
      this.scheduleBackstop();
      // It may have ended before the waiter was registered.
      void this.check([runId]);
    });
  }

  /** How many requests are waiting (tests read it). */
  get size(): number {
    let n = 0;
    for (const waiters of this.waiting.values()) n += waiters.length;
    return n;
  }

  private async check(runIds: readonly string[]): Promise<void> {
    await Promise.all(runIds.map((runId) => this.checkOne(runId)));
  }

  private async checkOne(runId: string): Promise<void> {
    const first = this.waiting.get(runId)?.[0];
    if (!first) return;
    let answer: Run;
    try {
      const run = await this.deps.store.getRun(first.organizationId, runId);
      if (!run) throw new Error(`run ${runId} is gone`);
      if (!isTerminal(run.status)) return;
      answer = toApiRun(run, this.deps.signer, this.deps.clock.now());
    } catch (err) {
      if (isConnectionLost(err)) {
        this.deps.logger.warn({ err, runId }, "store connection lost while waiting for a run; polling on");
        return;
      }
      for (const waiter of this.take(runId)) waiter.reject(err);
      return;
    }
    for (const waiter of this.take(runId)) waiter.resolve(answer);
  }

  private take(runId: string): Waiter[] {
    const waiters = this.waiting.get(runId) ?? [];
    this.waiting.delete(runId);
    return waiters;
  }

  private scheduleBackstop(): void {
    if (this.cancelBackstop || this.shutdown.aborted) return;
    this.cancelBackstop = this.deps.scheduler.setTimeout(async () => {
      this.cancelBackstop = undefined;
      // Maps iterate in insertion order: the longest waited-on come first; those read go last.
      const due: string[] = [];
      for (const runId of this.waiting.keys()) {
        if (due.length >= BACKSTOP_RUNS) break;
        due.push(runId);
      }
      for (const runId of due) {
        const waiters = this.waiting.get(runId);
        if (!waiters) continue;
        this.waiting.delete(runId);
        this.waiting.set(runId, waiters);
      }
      await this.check(due);
      if (this.waiting.size > 0) this.scheduleBackstop();
    }, this.backstopMs);
  }

  private endAll(): void {
    this.cancelBackstop?.();
    this.cancelBackstop = undefined;
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const waiter of all) waiter.resolve(null);
  }
}
