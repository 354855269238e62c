/**
 * Reading and ending predictions (get, cancel, list) and serving their output files as
 * replicate.delivery does; the sources are in replicate-server.ts.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Prediction, problem, send, TERMINAL } from "./replicate-protocol.js";
import type { predictionRunner, ReplicateContext } from "./replicate-run.js";
import { testVideo } from "./video.js";

/** A place in the list: a prediction's creation time and its rank among all created. */
interface Place {
  t: number;
  s: number;
}
interface Listed {
  p: Prediction;
  at: Place;
}
const newer = (a: Place, b: Place) => a.t > b.t || (a.t === b.t && a.s > b.s);

/** A cursor: the place a page starts after (`next`) or ends before (`previous`). */
function writeCursor(at: Place, previous: boolean): string {
  const params = new URLSearchParams(previous ? { r: "1" } : {});
  params.set("p", `${at.t}.${at.s}`);
  return Buffer.from(params.toString()).toString("base64url");
}

/** The cursor's place, or undefined when it is not one of ours. */
function readCursor(cursor: string): { at: Place; previous: boolean } | undefined {
  const params = new URLSearchParams(Buffer.from(cursor, "base64url").toString("utf8"));
  const place = /^(\d+)\.(\d+)$/.exec(params.get("p") ?? "");
  if (!place) return undefined;
  return { at: { t: Number(place[1]), s: Number(place[2]) }, previous: params.get("r") === "1" };
}

/** The read, cancel and download handlers over `ctx`. */
export function predictionRoutes(ctx: ReplicateContext, runner: ReturnType<typeof predictionRunner>) {
  const { knobs, predictions, byFileKey, hanging, listPageSize: pageSize } = ctx;
  const { removed, view, listed, finish } = runner;

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

  /**
   * `GET /v1/predictions` (predictions.list): newest first; `created_after` keeps those created at
   * or after, `created_before` those created before an ISO 8601 date-time; `listPageSize` a page
   * (Replicate: 100). Pages link by `next` and `previous` URLs that carry an opaque `cursor`, as
   * Replicate's lists do (deployments.list's example: `?cursor=cD0yMDIz...`, a Django REST framework
   * cursor). A cursor marks a place in the list, so predictions created meanwhile shift no page.
   */
  function list(res: ServerResponse, query: URLSearchParams) {
    const after = query.get("created_after");
    const before = query.get("created_before");
    for (const [name, value] of [
      ["created_after", after],
      ["created_before", before],
    ] as const) {
      if (value !== null && Number.isNaN(Date.parse(value))) {
        return problem(res, 400, "Bad Request", `${name} must be an ISO 8601 date-time.`);
      }
    }
    // Newest first; of those created in the same millisecond, the one created later first.
    const all: Listed[] = [...predictions.values()]
      .map((p, seq) => ({ p, at: { t: p.createdAt, s: seq } }))
      .filter(
        ({ p }) =>
          (after === null || p.createdAt >= Date.parse(after)) &&
          (before === null || p.createdAt < Date.parse(before)),
      )
      .sort((a, b) => b.at.t - a.at.t || b.at.s - a.at.s);
    const cursor = query.get("cursor");
    const from = cursor === null ? null : readCursor(cursor);
    if (from === undefined) return problem(res, 404, "Not found", "Invalid cursor");
    const page =
      from === null
        ? all.slice(0, pageSize)
        : from.previous
          ? all.filter((e) => newer(e.at, from.at)).slice(-pageSize)
          : all.filter((e) => newer(from.at, e.at)).slice(0, pageSize);
    const link = (at: Place, previous: boolean) => {
      const params = new URLSearchParams();
      if (after !== null) params.set("created_after", after);
      if (before !== null) params.set("created_before", before);
      params.set("cursor", writeCursor(at, previous));
      return `${ctx.base()}/v1/predictions?${params}`;
    };
    const first = page[0]?.at;
    const last = page.at(-1)?.at;
    send(res, 200, {
      next: last && all.some((e) => newer(last, e.at)) ? link(last, false) : null,
      previous: first && all.some((e) => newer(e.at, first)) ? link(first, true) : null,
      results: page.map((e) => listed(e.p)),
    });
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
