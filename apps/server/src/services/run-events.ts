/**
 * In-process signals between the API, the worker and the dispatcher: a run was queued, a run
 * ended, a webhook is due. They only wake loops early; every loop also polls the store, so a
 * missed signal costs latency, never correctness.
 */
import { EventEmitter } from "node:events";

export class RunEvents {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  runQueued(): void {
    this.emitter.emit("queued");
  }

  /** The run started, or its progress moved: its event streams send it on. */
  runChanged(runId: string): void {
    this.emitter.emit(`changed:${runId}`);
  }

  onRunChanged(runId: string, listener: () => void): () => void {
    this.emitter.on(`changed:${runId}`, listener);
    return () => this.emitter.off(`changed:${runId}`, listener);
  }

  runEnded(runId: string): void {
    this.emitter.emit(`ended:${runId}`);
    this.emitter.emit("ended", runId);
  }

  /** Wakes every loop and waiter to re-check the store, after signals from elsewhere were missed. */
  recheckAll(): void {
    for (const name of this.emitter.eventNames()) {
      if (typeof name === "string" && name.startsWith("ended:")) this.emitter.emit(name);
    }
    this.emitter.emit("ended");
    this.emitter.emit("queued");
  }

  /**
   * The run was ended by someone other than the worker holding it (a cancel, the sweeper, another
   * process): a local worker still on it stops, and its waiters and the loops wake.
   */
  runEndedElsewhere(runId: string): void {
    this.cancelRequested(runId);
    this.runEnded(runId);
  }

  /** Stops a local worker on the run; `runEndedElsewhere` is the usual way to say it. */
  private cancelRequested(runId: string): void {
    this.emitter.emit(`cancel:${runId}`);
  }

  /**
   * Every run queued, or every run's end: "ended" listeners hear the run's id, or none when every
   * waiter should look again (`recheckAll`).
   */
  on(event: "queued" | "ended", listener: (runId?: string) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  onRunEnded(runId: string, listener: () => void): () => void {
    this.emitter.on(`ended:${runId}`, listener);
    return () => this.emitter.off(`ended:${runId}`, listener);
  }

  onCancelRequested(runId: string, listener: () => void): () => void {
    this.emitter.on(`cancel:${runId}`, listener);
    return () => this.emitter.off(`cancel:${runId}`, listener);
  }
}
