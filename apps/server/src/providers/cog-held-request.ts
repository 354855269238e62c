/**
 * The held request behind a Cog prediction: a PUT over node:http (fetch gives up waiting for headers
 * after 300 s, and coglet cancels a sync prediction whose request is dropped), answered when the
 * prediction ends.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { ProviderError } from "./types.js";

const KEEPALIVE_MS = 30_000;
/** A JavaScript string holds at most ~512 MiB; larger outputs belong on Cog's upload URL. */
const MAX_ANSWER_BYTES = 500 * 1024 * 1024;

/**
 * The held request ended without a whole answer. `sent` once the request had all gone out: Cog may
 * then hold its prediction.
 */
export class HeldRequestLost extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

export interface HeldAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * PUT with no time limit on the answer (a sync prediction answers when it ends); only `signal`
 * ends it. TCP keep-alive notices a box that went away.
 */
export function putAndHold(
  url: URL,
  payload: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<HeldAnswer> {
  return new Promise((resolve, rejectWith) => {
    let sent = false;
    const reject = (err: unknown) =>
      rejectWith(
        err instanceof ProviderError
          ? err
          : new HeldRequestLost(err instanceof Error ? err.message : String(err), sent),
      );
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: "PUT",
        headers: { ...headers, "content-length": String(Buffer.byteLength(payload)) },
        signal,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
          else {
            reject(
              new ProviderError("The model's output is too large to take inline: give Cog an upload URL."),
            );
            req.destroy();
          }
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on("error", reject);
        res.on("close", () => {
          if (!res.complete) reject(new Error("the answer was cut short"));
        });
      },
    );
    req.on("socket", (socket) => socket.setKeepAlive(true, KEEPALIVE_MS));
    req.on("finish", () => {
      sent = true;
    });
    req.on("error", reject);
    req.end(payload);
  });
}
