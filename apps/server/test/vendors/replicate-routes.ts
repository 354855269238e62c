/**
 * Reading and ending predictions (get, cancel, list) and serving their output files as
 * replicate.delivery does; the sources are in replicate-server.ts.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { problem, send, TERMINAL } from "./replicate-protocol.js";
import type { predictionRunner, ReplicateContext } from "./replicate-run.js";
import { testVideo } from "./video.js";

/** The read, cancel and download handlers over `ctx`. */
export function predictionRoutes(ctx: ReplicateContext, runner: ReturnType<typeof predictionRunner>) {
  const { knobs, predictions, byFileKey, hanging } = ctx;
  const { removed, view, finish } = runner;

  async function status(res: ServerResponse, id: string) {
    if (knobs.hangStatus) {
      await new Promise<void>((resolve) => {
        hanging.add(resolve);
        res.once("close", resolve);
      });
      if (ctx.closing.aborted) return;
    }
    const p = predictions.get(id);
    if (!p) return problem(res, 404, "Not found", "Not found.");
    send(res, 200, view(p));
  }

  function cancel(res: ServerResponse, id: string) {
    const p = predictions.get(id);
    if (!p) return problem(res, 404, "Not found", "Not found.");
    p.stat.cancelRequests++;
    // A prediction that has already ended is answered as it is.
    if (!TERMINAL.has(p.status)) {
      p.stat.canceled = true;
      finish(p, "canceled");
    }
    send(res, 200, view(p));
  }

  function list(res: ServerResponse, query: URLSearchParams) {
    const after = query.get("created_after");
    const before = query.get("created_before");
    const results = [...predictions.values()]
      .filter(
        (p) =>
          (after === null || p.createdAt >= Date.parse(after)) &&
          (before === null || p.createdAt < Date.parse(before)),
      )
      .sort((a, b) => b.createdAt - a.createdAt)
      .map(view);
    send(res, 200, { next: null, previous: null, results });
  }

  /** The output file, as replicate.delivery serves it: public, with byte ranges. */
  async function download(req: IncomingMessage, res: ServerResponse, fileKey: string) {
    const p = byFileKey.get(fileKey);
    if (p?.status !== "succeeded" || removed(p)) {
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("Not Found");
    }
    if (p.malformed === "not-a-video") {
      const junk = Buffer.from("<html><body>render worker crashed</body></html>\n".repeat(20));
      res.writeHead(200, { "content-type": "video/mp4", "content-length": junk.length });
      return res.end(req.method === "HEAD" ? undefined : junk);
    }
    const path = await testVideo(p.seconds);
    const size = (await stat(path)).size;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    let start = 0;
    let end = size - 1;
    if (range && (range[1] || range[2])) {
      if (range[1]) {
        start = Number(range[1]);
        if (range[2]) end = Math.min(Number(range[2]), size - 1);
      } else {
        start = Math.max(0, size - Number(range[2]));
      }
      if (start > end || start >= size) {
        res.writeHead(416, { "content-range": `bytes */${size}` });
        return res.end();
      }
    }
    const partial = start !== 0 || end !== size - 1;
    res.writeHead(partial ? 206 : 200, {
      "content-type": "video/mp4",
      "content-length": end - start + 1,
      "accept-ranges": "bytes",
      ...(partial ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === "HEAD") return res.end();
    createReadStream(path, { start, end }).pipe(res);
  }

  return { status, cancel, list, download };
}
