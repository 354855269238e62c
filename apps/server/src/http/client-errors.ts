/**
 * What Node's HTTP parser refuses before Express sees it: bytes that are not a request (such as a
 * GET body sent with neither Content-Length nor chunking), headers over the size limit, and
 * requests that outlive `REFVID_HEADERS_TIMEOUT_MS` or `REFVID_REQUEST_TIMEOUT_MS`, or whose body
 * comes slower than `REFVID_MIN_BODY_BYTES_PER_S` (body-rate.ts). Node's own
 * answer is a bare status written at once, even ahead of the answer still owed to the request
 * before, and then a reset. Here the answer is the API's JSON error, written after any answer in
 * flight on that connection, and the connection is closed gently: the client reads what it was
 * sent rather than a reset.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { newRequestId } from "../ids.js";
import { BODY_TOO_SLOW } from "./body-rate.js";

/** How long a closed connection keeps reading (and dropping) what the client still sends. */
const LINGER_MS = 2_000;

/** A message of null is the error's own (it names a configured limit). */
const STATUS: Record<string, [status: number, reason: string, type: string, message: string | null]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    "Request Timeout",
    "request_timeout",
    "The request did not arrive in time; send the headers and the body without pausing.",
  ],
  [BODY_TOO_SLOW]: [408, "Request Timeout", "request_timeout", null],
  HPE_HEADER_OVERFLOW: [
    431,
    "Request Header Fields Too Large",
    "header_fields_too_large",
    "The request headers are too large.",
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [
    413,
    "Payload Too Large",
    "payload_too_large",
    "The chunk extensions of the request body are too large.",
  ],
};
const MALFORMED: (typeof STATUS)[string] = [
  400,
  "Bad Request",
  "invalid_request",
  "The bytes received are not an HTTP/1.1 request. Send a body only with Content-Length or Transfer-Encoding: chunked.",
];

export function answerClientErrors(server: Server, logger: Logger): void {
  // The latest response on each connection, so an error can wait for the answer in flight.
  const latest = new WeakMap<Duplex, ServerResponse>();
  const handled = new WeakSet<Duplex>();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => latest.set(req.socket, res));
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (handled.has(socket)) return; // the parser repeats its error for every later chunk
    handled.add(socket);
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const [status, reason, type, fixed] = STATUS[err.code ?? ""] ?? MALFORMED;
    const message = fixed ?? err.message;
    const requestId = newRequestId();
    logger.debug({ requestId, code: err.code, status }, "refused a request the HTTP parser could not take");
    const close = (answer?: string) => {
      if (socket.writable) socket.end(answer);
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    const answer = () => {
      const body = JSON.stringify({ error: { type, code: status, message, request_id: requestId } });
      close(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
    };
    const current = latest.get(socket);
    if (!current) return answer();
    if (current.req.complete) {
      // The error is in what came after a whole request: answer it once that request's answer is out.
      if (current.writableFinished) answer();
      else current.once("close", answer);
      return;
    }
    // The error is in the request being received. Answered already (before its body arrived): the
    // answer stands, so just hang up; else answer now.
    if (current.headersSent) close();
    else answer();
  });
}
