/** API errors in the words a person needs: what went wrong and what to do about it. */
import {
  AuthenticationError,
  ConcurrencyLimitError,
  InsufficientBalanceError,
  RateLimitError,
  RefvidError,
  ValidationError,
} from "@refvid/client";

export function describeError(error: unknown): string {
  if (error instanceof RateLimitError) {
    const seconds = error.retryAfterSeconds;
    if (seconds === undefined) return "Too many requests. Wait a moment and try again.";
    const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString();
    return `Too many requests. You can retry in ${seconds} s (at ${at}).`;
  }
  if (error instanceof InsufficientBalanceError) {
    return `Not enough balance: this run needs $${error.requiredUsd}, and $${error.availableUsd} is available. Top up the wallet and try again.`;
  }
  if (error instanceof ConcurrencyLimitError) {
    const whose = error.scope === "api_key" ? "This key" : "Your organization";
    return `${whose} already has ${error.inFlight} of ${error.limit} runs in flight. Wait for one to end, or cancel one.`;
  }
  if (error instanceof AuthenticationError) return "The API key was refused. Sign out and paste a valid key.";
  if (error instanceof ValidationError) {
    return error.fields.length > 0
      ? `The request was refused: ${error.fields.map((f) => `${f.field}: ${f.message}`).join("; ")}`
      : error.message;
  }
  if (error instanceof RefvidError) {
    return `${error.message}${error.requestId ? ` (request ${error.requestId})` : ""}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p className="error" role="alert">
      {describeError(error)}
    </p>
  );
}

/**
 * A `400 invalid_request`'s problems with the named fields, keyed by name (`query.from` and
 * `body.from` are both `from`), the first problem of each; `rest` is true when some problem
 * names no field in `names`, so the whole error is worth showing as well.
 */
export function fieldProblems(
  error: unknown,
  names: readonly string[],
): { byField: Record<string, string>; rest: boolean } {
  const byField: Record<string, string> = {};
  if (!(error instanceof ValidationError)) return { byField, rest: error !== undefined && error !== null };
  let rest = error.fields.length === 0;
  for (const problem of error.fields) {
    const name = problem.field.replace(/^(body|query|path)\./, "");
    if (names.includes(name)) byField[name] ??= problem.message;
    else rest = true;
  }
  return { byField, rest };
}

/** A field's problem, under it; give the field `aria-describedby={id}` while it shows. */
export function FieldError({ id, problem }: { id: string; problem: string | undefined }) {
  if (!problem) return null;
  return (
    <p className="field-error" id={id}>
      {problem}
    </p>
  );
}
