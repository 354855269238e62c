/**
 * Limits of the HTTP server itself, against slow and greedy clients: how long a request may take
 * to arrive (the request timeout bounds receiving the headers and the body, never the response, so
 * a sync submit may wait for its run as long as it needs), how long its headers may take, and how
 * many connections are open at once. Call it right after `listen` and before `'listening'`, when
 * Node starts checking the two timeouts.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { answerClientErrors } from "./client-errors.js";

const slowBodies = new WeakSet<IncomingMessage>();

/**
 * Lets a request's body take longer than REFVID_REQUEST_TIMEOUT_MS, as long as no pause between
 * its bytes lasts that long (large uploads).
 */
export function allowSlowBody(req: IncomingMessage): void {
  slowBodies.add(req);
}

export function configureHttpServer(
  server: Server,
  config: Pick<Config, "requestTimeoutMs" | "headersTimeoutMs" | "maxConnections">,
  logger: Logger,
): Server {
  server.headersTimeout = config.headersTimeoutMs;
  server.maxConnections = config.maxConnections;
  // How often Node looks for requests past the headers timeout (its default is every 30 s).
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    1_000,
    Math.max(50, Math.floor(config.headersTimeoutMs / 4)),
  );
  // Connections refused over the cap: one warning a minute at most, with the count.
  let dropped = 0;
  let warnedAt = 0;
  server.on("drop", () => {
    dropped++;
    if (Date.now() - warnedAt < 60_000) return;
    warnedAt = Date.now();
    logger.warn(
      { maxConnections: config.maxConnections, dropped },
      "refusing connections over REFVID_MAX_CONNECTIONS",
    );
    dropped = 0;
  });
  // The whole-request timeout is kept here rather than by Node, which cannot exempt one request:
  // an upload may take longer than REFVID_REQUEST_TIMEOUT_MS as long as its bytes keep coming
  // (`allowSlowBody`). Node still times the headers. The timer runs until the body has arrived,
  // also after an early answer (a 401 or 413 sent before the body was read); when it fires, the
  // request is refused as Node would refuse it (`answerClientErrors`: a JSON 408, or a hang-up).
  server.requestTimeout = 0;
  server.on("request", (req: IncomingMessage) => {
    // A request without a body is whole once its headers are, and Node times those.
    if (
      req.complete ||
      (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined)
    ) {
      return;
    }
    let bytesRead = req.socket.bytesRead;
    const timer = setTimeout(function expire() {
      if (req.complete || req.socket.destroyed) return;
      if (slowBodies.has(req) && req.socket.bytesRead > bytesRead) {
        bytesRead = req.socket.bytesRead;
        timer.refresh();
        return;
      }
      const err: NodeJS.ErrnoException = new Error("the request did not arrive in time");
      err.code = "ERR_HTTP_REQUEST_TIMEOUT";
      server.emit("clientError", err, req.socket);
    }, config.requestTimeoutMs).unref();
    // The request closes when it has been answered and read, or when its connection closes; no
    // listener goes on the socket, which a keep-alive connection shares with later requests.
    const stop = () => clearTimeout(timer);
    req.once("end", stop);
    req.once("close", stop);
  });
  answerClientErrors(server, logger);
  return server;
}
