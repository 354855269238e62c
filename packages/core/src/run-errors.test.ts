import { describe, expect, it } from "vitest";
import { RUN_ERROR_TYPES, RunFailure, runError, runErrors, statusOfRunError } from "./run-errors.js";

describe("run errors", () => {
  it("gives every type its code and the status it ends the run with", () => {
    expect(RUN_ERROR_TYPES.map((type) => [type, runError(type, "m").code, statusOfRunError(type)])).toEqual([
      ["provider_error", 502, "failed"],
      ["invalid_reference_media", 422, "failed"],
      ["timeout", 504, "timeout"],
      ["cancelled", 499, "cancelled"],
      ["internal_error", 500, "failed"],
    ]);
  });

  it("builds the errors the worker, sweeper and cancel end runs with", () => {
    expect(runErrors.timeout(900_000)).toEqual({
      type: "timeout",
      code: 504,
      message: "The run did not finish within 900 s.",
    });
    expect(runErrors.cancelled()).toMatchObject({ type: "cancelled", code: 499 });
    expect(runErrors.internal()).toMatchObject({ type: "internal_error", code: 500 });
  });

  it("turns a RunFailure into its run error, keeping its message", () => {
    class ProviderError extends RunFailure {
      constructor(message: string) {
        super("provider_error", message);
      }
    }
    const failure = new ProviderError("the model refused");
    expect(failure).toBeInstanceOf(RunFailure);
    expect(failure.name).toBe("ProviderError");
    expect(failure.code).toBe(502);
    expect(failure.toRunError()).toEqual({ type: "provider_error", code: 502, message: "the model refused" });
  });
});
