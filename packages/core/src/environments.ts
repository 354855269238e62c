/**
 * Live and test: two worlds inside one organization (docs/decisions.md, "Test keys").
 *
 * A run belongs to the environment of the key that made it, and only keys of that environment
 * see, search or cancel it. Test runs always run on the `simulated` provider, are priced and
 * billed on the run like live runs, but never hold or take money from the wallet. They are held
 * to the same caps as live runs, counted apart: a test run never takes a live run's slot.
 */
export type Environment = "live" | "test";

/** Whether runs of this environment hold and take money from the organization's wallet. */
export const paysFromWallet = (environment: Environment): boolean => environment === "live";

/** A change to the organization's in-flight counts, one per environment. */
export interface InFlightDelta {
  live: number;
  test: number;
}

/** `delta` applied to `environment`'s count only. */
export const inFlightDelta = (environment: Environment, delta: number): InFlightDelta =>
  environment === "live" ? { live: delta, test: 0 } : { live: 0, test: delta };

/**
 * Whether a run goes to the sandbox (the simulated provider) instead of its model's routes: a test
 * run never reaches a model vendor, so a test run of a model routed to one is simulated
 * (docs/decisions.md, "Test keys"). A model served only by built-in providers runs as configured.
 */
export const runsInSandbox = (environment: Environment, routes: readonly { vendor: boolean }[]): boolean =>
  environment === "test" && routes.some((route) => route.vendor);
