/**
 * Limits of the HTTP server itself, against slow and greedy clients: how long a request may take
 * to arrive (`requestTimeout` bounds receiving the headers and the body, never the response, so a
 * sync submit may wait for its run as long as it needs), how long its headers may take, and how
 * many connections are open at once. Call it right after `listen` and before `'listening'`, when
 * Node starts checking the two timeouts.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { answerClientErrors } from "./client-errors.js";

export function configureHttpServer(
  server: Server,
  config: Pick<Config, "requestTimeoutMs" | "headersTimeoutMs" | "maxConnections">,
  logger: Logger,
): Server {
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = config.headersTimeoutMs;
  server.maxConnections = config.maxConnections;
  // How often Node looks for requests past those timeouts (its default is every 30 s).
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
  // Node stops timing a request once it is answered, even while its body is still arriving (a 401
  // or 413 sent before reading it, or a GET with a body). Such a body gets only what is left of
  // the request timeout; then the connection is closed.
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const deadline = Date.now() + config.requestTimeoutMs;
    res.once("finish", () => {
      if (req.complete) return;
      const timer = setTimeout(() => {
        if (!req.complete) req.socket.destroy();
      }, deadline - Date.now()).unref();
      req.once("end", () => clearTimeout(timer));
      req.socket.once("close", () => clearTimeout(timer));
    });
  });
  answerClientErrors(server, logger);
  return server;
}
