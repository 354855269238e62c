/**
 * Exit codes, and how each kind of error is told to the user: 0 ok, 1 the run did not succeed,
 * 2 bad usage, 3 the API refused (or could not be reached).
 */
import {
  ConcurrencyLimitError,
  errorFromResponse,
  InsufficientBalanceError,
  RateLimitError,
  RefvidError,
  RequestTimeoutError,
  ValidationError,
} from "@refvid/client";
import type { Output } from "./io.js";

export const EXIT_OK = 0;
export const EXIT_RUN_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_API = 3;
export const EXIT_INTERRUPTED = 130;

/** The command line is wrong: an unknown model, a missing value, an input that breaks the model's schema. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The data of an openapi-fetch result (`client.api`), or the API's typed error. */
export async function apiData<T>(
  result: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await result;
  if (!response.ok || data === undefined) throw errorFromResponse(response, error);
  return data;
}

/** fetch's own failure (`TypeError: fetch failed`, the reason in `cause`): the server could not be reached. */
function unreachable(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== "fetch failed") return undefined;
  const cause = error.cause as
    | { code?: string; message?: string; address?: string; port?: number }
    | undefined;
  const where = cause?.address ? ` at ${cause.address}${cause.port ? `:${cause.port}` : ""}` : "";
  return `could not reach the refvid server${where} (${cause?.code ?? cause?.message ?? "network error"}): check REFVID_BASE_URL or your profile`;
}

/** How to name an API field (`body.input.duration`) as the flag that sets it (`--duration`). */
const fieldFlags = new WeakMap<RefvidError, (field: string) => string | undefined>();

/** Attaches the flag names of `error`'s fields, so that the report says which flag to fix. */
export function withFieldFlags(error: unknown, flagFor: (field: string) => string | undefined): unknown {
  if (error instanceof RefvidError) fieldFlags.set(error, flagFor);
  return error;
}

function apiDetails(error: RefvidError): string[] {
  const lines: string[] = [];
  if (error instanceof ValidationError) {
    const flagFor = fieldFlags.get(error);
    for (const problem of error.fields) {
      const flag = flagFor?.(problem.field);
      const name = flag ? `${flag} (${problem.field})` : problem.field;
      lines.push(`${name}: ${problem.message}`);
    }
  }
  if (error instanceof InsufficientBalanceError) {
    lines.push(`needs ${error.requiredUsd} USD, ${error.availableUsd} USD available`);
  }
  if (error instanceof ConcurrencyLimitError) {
    const scope = error.scope === "api_key" ? "this API key" : "the organization";
    lines.push(`${scope} already has ${error.inFlight} of ${error.limit} runs in flight`);
  }
  if (
    (error instanceof RateLimitError || error.status === 429 || error.status === 503) &&
    error.retryAfterSeconds
  ) {
    const at = new Date(Date.now() + error.retryAfterSeconds * 1000).toLocaleTimeString();
    lines.push(`retry in ${error.retryAfterSeconds} s (at ${at})`);
  }
  if (error.requestId) lines.push(`request id: ${error.requestId}`);
  return lines;
}

function errorJson(error: unknown): Record<string, unknown> {
  if (error instanceof RefvidError) {
    const flagFor = fieldFlags.get(error);
    return {
      error: {
        type: error.type,
        message: error.message,
        status: error.status,
        ...(error instanceof ValidationError
          ? { fields: error.fields.map((f) => ({ ...f, flag: flagFor?.(f.field) ?? null })) }
          : {}),
        retry_after_seconds: error.retryAfterSeconds ?? null,
        request_id: error.requestId ?? null,
      },
    };
  }
  const type = error instanceof UsageError ? "usage" : "error";
  return { error: { type, message: error instanceof Error ? error.message : String(error) } };
}

/** Tells the user about `error` (on stderr, and as JSON on stdout with `--json`); the exit code. */
export function report(error: unknown, io: Output): number {
  const { ce } = io;
  let code: number;
  let lines: string[];
  if (error instanceof UsageError) {
    code = EXIT_USAGE;
    lines = [error.message];
  } else if (error instanceof RefvidError) {
    code = EXIT_API;
    lines = [
      `${error.message} (${error.type}, HTTP ${error.status})`,
      ...apiDetails(error).map((l) => `  ${l}`),
    ];
  } else if (error instanceof RequestTimeoutError) {
    code = EXIT_API;
    lines = [error.message];
  } else if (unreachable(error)) {
    code = EXIT_API;
    lines = [unreachable(error) as string];
  } else if ((error as { name?: string })?.name === "ExitPromptError") {
    io.info(ce.dim("Interrupted."));
    return EXIT_INTERRUPTED;
  } else {
    code = EXIT_RUN_FAILED;
    lines = [error instanceof Error ? (error.stack ?? error.message) : String(error)];
  }
  io.info(`${ce.red("error:")} ${lines.join("\n")}`);
  if (io.json && code !== EXIT_USAGE) io.printJson(errorJson(error));
  return code;
}
