/**
 * The store, with every run end this process makes counted (`refvid_runs_ended_total`). The worker,
 * cancel and the sweeper all end runs through `completeRun`, which answers `completed` to exactly
 * one caller across every process, so each end is counted once, by the process that made it.
 */
import type { Store } from "@refvid/store";
import type { Metrics } from "./metrics.js";

export function countRunEnds(store: Store, metrics: Metrics): Store {
  const completeRun: Store["completeRun"] = async (input) => {
    const result = await store.completeRun(input);
    if (result.kind === "completed") metrics.runEnded(result.run);
    return result;
  };
  // Each method is bound once, not at every call: the store is on every request's path.
  const bound = new Map<PropertyKey, unknown>([["completeRun", completeRun]]);
  return new Proxy(store, {
    get(target, property) {
      const known = bound.get(property);
      if (known !== undefined) return known;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value.bind(target);
      bound.set(property, method);
      return method;
    },
  });
}
