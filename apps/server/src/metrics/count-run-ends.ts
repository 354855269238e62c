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
  return new Proxy(store, {
    get(target, property) {
      if (property === "completeRun") return completeRun;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
