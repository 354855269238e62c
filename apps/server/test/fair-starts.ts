/** The fair-share assertion the fair-queue suites share, on the order runs started in. */
import { expect } from "vitest";

export interface Start {
  organizationId: string;
  /** When it started (ms since the epoch). */
  at: number;
}

/**
 * From the moment every light organization had a run queued (`since`), the heavy one started at
 * most three runs before each light organization's first, and went on getting about its share:
 * with eleven organizations waiting, about one start in eleven (at least three here).
 */
export function expectFairStarts(
  order: readonly Start[],
  heavy: string,
  lights: readonly string[],
  since: number,
) {
  const heavyStarts = order.flatMap((s, i) => (s.organizationId === heavy && s.at >= since ? [i] : []));
  const heavyFourth = heavyStarts[3] ?? Number.POSITIVE_INFINITY;
  for (const light of lights) {
    expect(order.findIndex((s) => s.organizationId === light)).toBeLessThan(heavyFourth);
  }
  expect(heavyStarts.length).toBeGreaterThanOrEqual(3);
}
