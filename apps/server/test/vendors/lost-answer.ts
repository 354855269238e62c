/**
 * A create whose answer is lost on its way back, for the fal and Replicate protocol servers: the
 * vendor took the job (it exists, runs, is billed and sends its webhooks) but the client never
 * learns of it, and may create it again. Neither vendor offers an idempotency key for creates
 * (replicate-server.ts, fal-server.ts), so a client can only find such a job afterwards.
 * - "drop": the connection is destroyed before any byte of the answer (a reset, or the client's
 *   timeout on a connection that broke mid-answer).
 * - "502": the gateway in front of the API answers 502 Bad Gateway, as a load balancer does when
 *   its upstream's answer does not reach it, although the upstream took the job.
 */
import type { ServerResponse } from "node:http";

export type LoseAnswerAs = "drop" | "502";

const dropped = new WeakSet<ServerResponse>();

/** A gateway's own error page (HTML, not the API's JSON), as nginx-style load balancers send. */
export function gatewayError(res: ServerResponse, status: 502 | 503) {
  const text = status === 502 ? "502 Bad Gateway" : "503 Service Temporarily Unavailable";
  res.writeHead(status, { "content-type": "text/html" });
  res.end(`<html><head><title>${text}</title></head><body><center><h1>${text}</h1></center></body></html>`);
}

/** Loses the answer to an accepted create. */
export function loseAnswer(res: ServerResponse, as: LoseAnswerAs) {
  if (as === "502") return gatewayError(res, 502);
  dropped.add(res);
  res.destroy();
}

/** Calls `record` with the status `res` was answered with, or with 0 when its answer was dropped. */
export function whenAnswered(res: ServerResponse, record: (status: number) => void) {
  res.once("finish", () => record(res.statusCode));
  res.once("close", () => {
    if (dropped.has(res)) record(0);
  });
}
