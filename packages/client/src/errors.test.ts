import { describe, expect, it } from "vitest";
import { API_KEY, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import {
  AuthenticationError,
  ConcurrencyLimitError,
  ConflictError,
  InsufficientBalanceError,
  NotFoundError,
  RateLimitError,
  RefvidError,
  ValidationError,
} from "./errors.js";

const SLUG = "lab-a/model-a/reference-to-video";
const NO_RETRY = { maxRetries: 0 };

interface ErrorCase {
  name: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  errorClass: new (...args: never[]) => RefvidError;
  fields: Record<string, unknown>;
}

describe("typed errors", () => {
  it.each<ErrorCase>([
    {
      name: "429 concurrency limit",
      status: 429,
      headers: { "retry-after": "2" },
      body: {
        error: {
          code: "concurrency_limit_exceeded",
          message: "too many",
          scope: "api_key",
          limit: 10,
          in_flight: 10,
        },
      },
      errorClass: ConcurrencyLimitError,
      fields: {
        type: "concurrency_limit_exceeded",
        scope: "api_key",
        limit: 10,
        inFlight: 10,
        retryAfterSeconds: 2,
        message: "too many",
      },
    },
    {
      name: "429 rate limit",
      status: 429,
      headers: { "retry-after": "7", "x-request-id": "req_rl" },
      body: { error: "rate_limit_exceeded", message: "120 per minute" },
      errorClass: RateLimitError,
      fields: {
        type: "rate_limit_exceeded",
        retryAfterSeconds: 7,
        message: "120 per minute",
        requestId: "req_rl",
      },
    },
    {
      name: "429 rate limit, the request id only in the body (a proxy dropped the header)",
      status: 429,
      headers: { "retry-after": "7" },
      body: { error: "rate_limit_exceeded", message: "120 per minute", request_id: "req_rl_body" },
      errorClass: RateLimitError,
      fields: { type: "rate_limit_exceeded", requestId: "req_rl_body" },
    },
    {
      name: "429 concurrency limit, the request id only in the body",
      status: 429,
      headers: { "retry-after": "1" },
      body: {
        error: {
          code: "concurrency_limit_exceeded",
          message: "too many",
          scope: "organization",
          limit: 10,
          in_flight: 10,
          request_id: "req_cl_body",
        },
      },
      errorClass: ConcurrencyLimitError,
      fields: { type: "concurrency_limit_exceeded", scope: "organization", requestId: "req_cl_body" },
    },
    {
      name: "400 insufficient balance",
      status: 400,
      headers: {},
      body: {
        error: {
          type: "insufficient_balance",
          code: 400,
          message: "top up",
          required_usd: "4.86",
          available_usd: "1.00",
          request_id: "req_ib",
        },
      },
      errorClass: InsufficientBalanceError,
      fields: {
        type: "insufficient_balance",
        requiredUsd: "4.86",
        availableUsd: "1.00",
        requestId: "req_ib",
      },
    },
    {
      name: "400 validation",
      status: 400,
      headers: {},
      body: {
        error: {
          type: "invalid_request",
          code: 400,
          message: "body.input.duration must be one of auto, 4, …",
          fields: [
            { field: "body.input.duration", message: "must be one of auto, 4, …", rule: "enum" },
            { field: "body.input.prompt", message: "is required" },
          ],
        },
      },
      errorClass: ValidationError,
      fields: {
        type: "invalid_request",
        fields: [
          { field: "body.input.duration", message: "must be one of auto, 4, …", rule: "enum" },
          { field: "body.input.prompt", message: "is required" },
        ],
      },
    },
    {
      name: "401 unauthorized",
      status: 401,
      headers: { "x-request-id": "req_401" },
      body: { error: { type: "unauthorized", code: 401, message: "unknown key" } },
      errorClass: AuthenticationError,
      fields: { type: "unauthorized", message: "unknown key", requestId: "req_401" },
    },
    {
      name: "404 not found",
      status: 404,
      headers: {},
      body: { error: { type: "model_not_found", code: 404, message: "no such model" } },
      errorClass: NotFoundError,
      fields: { type: "model_not_found" },
    },
    {
      name: "409 conflict",
      status: 409,
      headers: {},
      body: { error: { type: "idempotency_key_in_use", code: 409, message: "still handling" } },
      errorClass: ConflictError,
      fields: { type: "idempotency_key_in_use" },
    },
    {
      name: "500 with a body that is not JSON",
      status: 500,
      headers: { "content-type": "text/plain" },
      body: "upstream exploded",
      errorClass: RefvidError,
      fields: { type: "http_500", message: "upstream exploded" },
    },
  ])(
    "a submit answered $name throws $errorClass.name",
    async ({ status, headers, body, errorClass, fields }) => {
      const server = await startServer((_req, res) => {
        if (typeof body === "string") {
          res.writeHead(status, headers);
          res.end(body);
        } else {
          sendJson(res, status, body, headers);
        }
      });
      const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: NO_RETRY });
      const error = await client.submit(SLUG, { prompt: "x" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(errorClass);
      expect(error).toBeInstanceOf(RefvidError);
      expect(error).toMatchObject({ status, body, name: errorClass.name, ...fields });
    },
  );

  it("getRun of an unknown run throws NotFoundError", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 404, { error: { type: "run_not_found", code: 404, message: "no such run" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    const error = await client.getRun("run_missing").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, type: "run_not_found", message: "no such run" });
  });

  it("cancelling a run that already ended throws ConflictError", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 409, { error: { type: "run_not_cancellable", code: 409, message: "already succeeded" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.cancelRun("run_1")).rejects.toBeInstanceOf(ConflictError);
    expect(server.requests).toHaveLength(1);
  });
});
