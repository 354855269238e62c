/**
 * Why a run did not succeed: a closed set of error types, each with its HTTP-like code and the
 * terminal status it ends the run with. The worker, the sweeper and cancel build run errors only
 * here, and `RunFailure` is the one base of errors that end a run (a provider's, a bad reference's).
 */

export const RUN_ERROR_TYPES = [
  "provider_error",
  "invalid_reference_media",
  "timeout",
  "cancelled",
  "internal_error",
] as const;

export type RunErrorType = (typeof RUN_ERROR_TYPES)[number];

/** The error a run ends with, as stored and as the Run's `error` field shows it. */
export interface RunError {
  type: RunErrorType;
  code: number;
  message: string;
}

const CODES: Record<RunErrorType, number> = {
  provider_error: 502,
  invalid_reference_media: 422,
  timeout: 504,
  cancelled: 499,
  internal_error: 500,
};

/** The terminal status a run error ends the run with. */
export function statusOfRunError(type: RunErrorType): "failed" | "timeout" | "cancelled" {
  switch (type) {
    case "timeout":
      return "timeout";
    case "cancelled":
      return "cancelled";
    case "provider_error":
    case "invalid_reference_media":
    case "internal_error":
      return "failed";
  }
}

export const runError = (type: RunErrorType, message: string): RunError => ({
  type,
  code: CODES[type],
  message,
});

export const runErrors = {
  timeout: (ms: number) => runError("timeout", `The run did not finish within ${Math.round(ms / 1000)} s.`),
  cancelled: () => runError("cancelled", "The run was cancelled at the client's request."),
  internal: (message = "The run failed on our side; it was not charged.") =>
    runError("internal_error", message),
  interrupted: () => runError("internal_error", "The run was interrupted."),
  providerError: (message: string) => runError("provider_error", message),
  invalidReferenceMedia: (message: string) => runError("invalid_reference_media", message),
};

/**
 * An error that ends a run as `failed` with its own type: thrown by providers (`provider_error`)
 * and by the media preflight (`invalid_reference_media`). Anything else thrown while a run is
 * processed is an `internal_error`.
 */
export class RunFailure extends Error {
  constructor(
    readonly type: "provider_error" | "invalid_reference_media",
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  get code(): number {
    return CODES[this.type];
  }

  toRunError(): RunError {
    return runError(this.type, this.message);
  }
}
