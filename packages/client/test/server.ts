/**
 * A real HTTP server on 127.0.0.1 for the client's tests: each test scripts its responses, and
 * the server records what actually arrived on the wire.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Run } from "@refvid/api-types";
import { onTestFinished } from "vitest";

/** A request as the server received it. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/runs/run_1`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body as it came, for binary ones. */
  bytes: Buffer;
  /** `performance.now()` when the request was fully read. */
  receivedAt: number;
}

/** Answers one request. `index` counts requests from 0 across the server's life. */
export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void | Promise<void>;

/** A running test server. */
export interface TestServer {
  baseUrl: string;
  requests: RecordedRequest[];
}

/** Sends a JSON response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(payload);
}

/** Kills the connection without answering, as a crashed proxy or a network fault would. */
export function dropConnection(res: ServerResponse) {
  res.socket?.destroy();
}

/** Starts a server for the current test; it is closed (connections included) when the test ends. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        bytes: Buffer.concat(chunks),
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: performance.now(),
      };
      const index = requests.push(recorded) - 1;
      Promise.resolve(handler(recorded, res, index)).catch((error: unknown) => {
        sendJson(res, 599, { test_server_error: String(error) });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, requests };
}

/** A run with every field present, as the API returns it. */
export function makeRun(overrides: Partial<Run> = {}): Run {
  return {
    run_id: "run_0f8c3a52-5d0e-4b8e-9d3c-2a7f1e6b9c41",
    environment: "live",
    endpoint: "lab-a/model-a/reference-to-video",
    model: "reference-to-video",
    capability: "video",
    mode: "reference-to-video",
    status: "queued",
    output: null,
    error: null,
    billing: null,
    metadata: {},
    progress: null,
    created_at: "2025-01-01T00:00:00.000Z",
    started_at: null,
    completed_at: null,
    elapsed_ms: null,
    ...overrides,
  };
}

/**
 * A fast retry policy, so retry tests take milliseconds. A `Retry-After` of 1 s or more exceeds
 * its `maxRetryDelayMs`, so such answers are not retried unless a test raises it.
 */
export const FAST_RETRY = { maxRetries: 3, baseDelayMs: 1, maxRetryDelayMs: 5 } as const;

/** Test API key. */
export const API_KEY = "sk-test-0123456789abcdef";
