/**
 * The `unit` of a run's billing and of a price preview. It is sent only for a price per run, so
 * that every answer about a price per second (every built-in model's) stays the interface's,
 * field for field (docs/decisions.md, "Model catalog").
 */
import { assertNever, type PriceUnit } from "@refvid/core";

export function unitField(unit: PriceUnit): { unit?: "run" } {
  switch (unit) {
    case "second":
      return {};
    case "run":
      return { unit: "run" };
    default:
      return assertNever(unit);
  }
}
