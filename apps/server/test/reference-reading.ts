/**
 * The simulated provider, but one that reads its references, so the worker downloads and checks
 * them first (the media preflight) without a real render; it remembers the jobs it was handed.
 */
import { SimulatedProvider } from "../src/providers/simulated.js";
import type { Provider, ProviderJob } from "../src/providers/types.js";

export class ReferenceReadingProvider implements Provider {
  readonly usesReferences = true;
  readonly jobs: ProviderJob[] = [];
  constructor(private readonly inner: SimulatedProvider) {}
  run(job: ProviderJob, context: Parameters<Provider["run"]>[1]) {
    this.jobs.push(job);
    return this.inner.run(job, context);
  }
}

/** A reading provider over a quick simulated one that keeps its test patterns in `cacheDir`. */
export const referenceReading = (cacheDir: string) =>
  new ReferenceReadingProvider(new SimulatedProvider({ latencyMs: 10, cacheDir }));
