/**
 * Request bodies: read only after authentication, only for methods that take one (POST, PUT,
 * PATCH), and never past `MAX_BODY_BYTES`. A body announced larger than that is refused before a
 * byte of it is read; a chunked one when it grows past it. Either way the answer is
 * `413 payload_too_large` naming the limit. A body sent with GET or DELETE is ignored (Node reads
 * it off the wire and drops it, within the request timeout).
 */
import express, { type RequestHandler, type Response } from "express";

/**
 * 512 KiB. The largest body the spec allows (model-a with 50 reference URLs of 2048 characters,
 * a 2000-character prompt, 16 metadata pairs at their maximum) is about 150 KB as UTF-8, and
 * about 235 KB with every non-ASCII character written as a `\u` escape.
 */
export const MAX_BODY_BYTES = 512 * 1024;

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

export function readJsonBody(limitBytes = MAX_BODY_BYTES): RequestHandler {
  const parse = express.json({ limit: limitBytes });
  return (req, res, next) => {
    const announced = Number(req.get("content-length"));
    if (announced > limitBytes) return sendTooLarge(res, limitBytes);
    if (!METHODS_WITH_BODY.has(req.method)) return next();
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === "entity.too.large")
        return sendTooLarge(res, limitBytes);
      next(err);
    });
  };
}

function sendTooLarge(res: Response, limitBytes: number) {
  res.status(413).json({
    error: {
      type: "payload_too_large",
      code: 413,
      message: `The request body is larger than ${limitBytes / 1024} KiB (${limitBytes} bytes), the most any operation takes.`,
      request_id: res.locals.requestId,
    },
  });
}
