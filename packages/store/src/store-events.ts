/**
 * The one source of run events: each adapter announces its own changes here, once each, right
 * after they happen (MemoryStore at once, PostgresStore once the transaction has committed), and
 * PostgresStore adds what other processes announce by NOTIFY. The server's `RunEvents` listens to
 * nothing else.
 */
import type { StoreEvent } from "./types.js";

type Listener = (event: StoreEvent) => void;

export class StoreEventHub {
  private readonly listeners = new Set<Listener>();

  /** Adds a listener; the function returned removes it. */
  add(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener; a listener that throws is its own failure, never the store call's. */
  emit(event: StoreEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // the subscriber's own failure; the others still hear the event
      }
    }
  }
}
