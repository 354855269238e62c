/**
 * An async step run every `intervalMs` on the Scheduler, the loop under the worker's polling, the
 * sweeper, the webhook dispatcher, retention and the worker's lease heartbeat. Runs never overlap:
 * the next is scheduled when the current one ends. `trigger()` runs it early; triggers that arrive
 * during a run make one more run right after it. A step that throws is logged and the schedule
 * goes on. `stop()` cancels the schedule and waits for a run in progress.
 */
import type { Logger } from "pino";
import type { CancelTimer, Scheduler } from "./clock.js";

export interface PeriodicTaskOptions {
  /** From the end of one run to the start of the next. */
  intervalMs: number;
  scheduler: Scheduler;
  logger: Logger;
  /** Logged at error level, with the error, when a run throws. */
  failureMessage: string;
  step: () => Promise<void>;
}

export class PeriodicTask {
  private started = false;
  private stopped = false;
  private cancelTimer: CancelTimer | undefined;
  /** Set from the moment a run begins (before the step's first await) until it has ended. */
  private busy = false;
  private running: Promise<void> | undefined;
  private again = false;
  /** Callers of `trigger` waiting for the next run to end. */
  private waiting: (() => void)[] = [];

  constructor(private readonly options: PeriodicTaskOptions) {}

  /** Schedules the first run an interval from now, or runs at once with `immediately`. */
  start({ immediately = false }: { immediately?: boolean } = {}): void {
    if (this.started || this.stopped) return;
    this.started = true;
    if (immediately) this.run();
    else this.schedule();
  }

  /**
   * Runs the step now, or once more right after the run in progress. Resolves when a run that
   * began after this call has ended; at once if the task is not running (not started, or stopped).
   */
  trigger(): Promise<void> {
    if (!this.started || this.stopped) return Promise.resolve();
    const ended = new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.busy) this.again = true;
    else this.run();
    return ended;
  }

  /** Cancels the schedule and waits for a run in progress; later triggers do nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.running;
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  private run(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.again = false;
    this.busy = true;
    const waiting = this.waiting.splice(0);
    this.running = this.runStep().then(() => {
      this.busy = false;
      this.running = undefined;
      for (const resolve of waiting) resolve();
      if (this.stopped) return;
      if (this.again) this.run();
      else this.schedule();
    });
  }

  private async runStep(): Promise<void> {
    try {
      await this.options.step();
    } catch (err) {
      this.options.logger.error({ err }, this.options.failureMessage);
    }
  }

  private schedule(): void {
    this.cancelTimer?.();
    this.cancelTimer = this.options.scheduler.setTimeout(() => {
      this.cancelTimer = undefined;
      this.run();
    }, this.options.intervalMs);
  }
}
