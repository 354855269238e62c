/**
 * Limits of the HTTP server itself, against slow and greedy clients (docs/decisions.md, "Requests
 * at the edge"): how long a request may take to arrive (the request timeout bounds receiving the
 * headers and the body, never the response, so a sync submit may wait for its run as long as it
 * needs), how long its headers may take, how slowly its body may come (body-rate.ts), how many
 * connections are open at once, and how many of them one client address may hold
 * (address-limit.ts). Call it right after `listen` and before `'listening'`, when Node starts
 * checking the two timeouts.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { limitConnectionsPerAddress } from "./address-limit.js";
import { bodyToCome, guardBodyRate } from "./body-rate.js";
import { answerClientErrors } from "./client-errors.js";

const slowBodies = new WeakSet<IncomingMessage>();

/**
 * Lets a request's body take longer than REFVID_REQUEST_TIMEOUT_MS, as long as no pause between
 * its bytes lasts that long (large uploads); REFVID_MIN_BODY_BYTES_PER_S still holds.
 */
export function allowSlowBody(req: IncomingMessage): void {
  slowBodies.add(req);
}

export type HttpLimits = Pick<
  Config,
  | "requestTimeoutMs"
  | "headersTimeoutMs"
  | "maxConnections"
  | "maxConnectionsPerAddress"
  | "trustProxy"
  | "minBodyRate"
>;

/**
 * One warning a minute at most for a kind of refusal, with how many there were since the last:
 * a flood of refusals must not become a flood of log lines.
 */
function warnEveryMinute(logger: Logger, message: string, fields: Record<string, unknown>) {
  let count = 0;
  let warnedAt = 0;
  return (extra: Record<string, unknown> = {}) => {
    count++;
    if (Date.now() - warnedAt < 60_000) return;
    warnedAt = Date.now();
    logger.warn({ ...fields, ...extra, refused: count }, message);
    count = 0;
  };
}

export function configureHttpServer(server: Server, config: HttpLimits, logger: Logger): Server {
  server.headersTimeout = config.headersTimeoutMs;
  server.maxConnections = config.maxConnections;
  // How often Node looks for requests past the headers timeout (its default is every 30 s).
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(
    1_000,
    Math.max(50, Math.floor(config.headersTimeoutMs / 4)),
  );
  const dropped = warnEveryMinute(logger, "refusing connections over REFVID_MAX_CONNECTIONS", {
    maxConnections: config.maxConnections,
  });
  server.on("drop", () => dropped());
  const crowded = warnEveryMinute(
    logger,
    "refusing connections over REFVID_MAX_CONNECTIONS_PER_ADDRESS (from a reverse proxy? name it in REFVID_TRUST_PROXY)",
    { maxConnectionsPerAddress: config.maxConnectionsPerAddress },
  );
  limitConnectionsPerAddress(server, config, (address) => crowded({ address }));
  if (config.minBodyRate) {
    const slow = warnEveryMinute(logger, "refusing request bodies slower than REFVID_MIN_BODY_BYTES_PER_S", {
      minBodyRate: config.minBodyRate,
    });
    guardBodyRate(server, config.minBodyRate, () => slow());
  }
  // The whole-request timeout is kept here rather than by Node, which cannot exempt one request:
  // an upload may take longer than REFVID_REQUEST_TIMEOUT_MS as long as its bytes keep coming
  // (`allowSlowBody`). Node still times the headers. The timer runs until the body has arrived,
  // also after an early answer (a 401 or 413 sent before the body was read); when it fires, the
  // request is refused as Node would refuse it (`answerClientErrors`: a JSON 408, or a hang-up).
  server.requestTimeout = 0;
  server.on("request", (req: IncomingMessage) => {
    // A request without a body is whole once its headers are, and Node times those.
    if (!bodyToCome(req)) return;
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
