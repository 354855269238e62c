/**
 * The store's run events, as this process's loops and waiters hear them: a run was queued, a run
 * started or moved on, a run ended. The store is their one source (`Store.subscribe`): its own
 * changes as they are made, and on Postgres every other process's by NOTIFY. Nothing else
 * announces a run's change. They only wake loops early; every loop also polls the store, so a
 * missed event costs latency, never correctness.
 */
import { EventEmitter } from "node:events";
import type { ListenHealth, Store, StoreEvent } from "@refvid/store";
import type { Logger } from "pino";

export class RunEvents {
  private readonly emitter = new EventEmitter();
  private health: ListenHealth = "ok";
  private unsubscribe: () => Promise<void> = async () => {};

  private constructor(private readonly log?: Pick<Logger, "info" | "warn">) {
    this.emitter.setMaxListeners(0);
  }

  /** The events of `store`, until `close`. */
  static async from(
    store: Pick<Store, "subscribe">,
    log?: Pick<Logger, "info" | "warn">,
  ): Promise<RunEvents> {
    const events = new RunEvents(log);
    events.unsubscribe = await store.subscribe((event) => events.hear(event));
    return events;
  }

  /** Whether the cross-process subscription is up; while it reconnects, other processes' events are missed. */
  get listenHealth(): ListenHealth {
    return this.health;
  }

  close(): Promise<void> {
    return this.unsubscribe();
  }

  private hear(event: StoreEvent): void {
    switch (event.kind) {
      case "queued":
        this.emitter.emit("queued");
        break;
      case "changed":
        for (const runId of event.runIds) this.emitter.emit(`changed:${runId}`);
        break;
      case "vendor":
        this.emitter.emit(`vendor:${event.runId}`);
        break;
      case "ended":
        // A local worker still on the run stops (its own end has detached it already); waiters wake.
        this.emitter.emit(`cancel:${event.runId}`);
        this.emitter.emit(`ended:${event.runId}`);
        this.emitter.emit("ended", event.runId);
        break;
      case "subscription":
        this.health = event.state;
        if (event.state === "reconnecting") {
          this.log?.warn("lost the store's event subscription; reconnecting");
        } else {
          this.log?.info("store event subscription restored; re-checking runs");
          this.recheckAll();
        }
        break;
    }
  }

  /** Wakes every loop and waiter to re-check the store, after events from elsewhere were missed. */
  private recheckAll(): void {
    for (const name of this.emitter.eventNames()) {
      if (typeof name === "string" && name.startsWith("ended:")) this.emitter.emit(name);
    }
    this.emitter.emit("ended");
    this.emitter.emit("queued");
  }

  /**
   * Every run queued, or every run's end: "ended" listeners hear the run's id, or none when every
   * waiter should look again (the subscription came back).
   */
  on(event: "queued" | "ended", listener: (runId?: string) => void): () => void {
    this.emitter.on(event, listener);
    return () => this.emitter.off(event, listener);
  }

  /** The run started, or its progress moved: its event streams send it on. */
  onRunChanged(runId: string, listener: () => void): () => void {
    this.emitter.on(`changed:${runId}`, listener);
    return () => this.emitter.off(`changed:${runId}`, listener);
  }

  onRunEnded(runId: string, listener: () => void): () => void {
    this.emitter.on(`ended:${runId}`, listener);
    return () => this.emitter.off(`ended:${runId}`, listener);
  }

  /** A vendor webhook for the run verified: the worker following its vendor job looks now. */
  onVendorHook(runId: string, listener: () => void): () => void {
    this.emitter.on(`vendor:${runId}`, listener);
    return () => this.emitter.off(`vendor:${runId}`, listener);
  }

  /** The run ended by someone else's hand (a cancel, the sweeper, another process): stop working on it. */
  onCancelRequested(runId: string, listener: () => void): () => void {
    this.emitter.on(`cancel:${runId}`, listener);
    return () => this.emitter.off(`cancel:${runId}`, listener);
  }
}
