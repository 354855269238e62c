/**
 * Reference uploads end to end: `POST /v1/files` as a form or a raw body, read back by its owner
 * only, used as a reference by a run that the preview provider renders from it (read from the
 * blob store, not downloaded), and refused clearly when it is too big, not media, someone
 * else's or gone.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import type { FileUpload } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/manual-clock.js";
import { probeDuration } from "../src/media/ffmpeg.js";
import { eventually, useTestRefvid } from "./harness.js";
import { openFiles, SCULPTURE, sendSlowly, specSchema } from "./upload-helpers.js";

const MODEL_D = "/v1/run/lab-d/model-d/reference-to-video";

const isFileUpload = specSchema("FileUpload");
const isError = specSchema("Error");

describe("reference uploads", () => {
  const server = useTestRefvid({ REFVID_PROVIDER: "lab-d/model-d/reference-to-video=preview" });

  const upload = (apiKey: string, body: RequestInit["body"], headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${apiKey}`, ...headers },
      body,
      duplex: "half",
    } as RequestInit);
  const storedUploads = async () =>
    (await readdir(join(server.refvid.deps.config.dataDir, "files")).catch(() => [] as string[])).filter(
      (name) => name.startsWith("upload_"),
    );

  it("uploads a form field, and a run renders from it without downloading it", async () => {
    const t = await server.tenant();
    const png = await readFile(SCULPTURE);
    const form = new FormData();
    form.append("file", new Blob([png], { type: "application/octet-stream" }), "sculpture.png");
    const res = await upload(t.apiKey, form);
    expect(res.status).toBe(201);
    const file = (await res.json()) as FileUpload;
    isFileUpload(file);
    expect(file).toMatchObject({
      file_id: expect.stringMatching(/^upload_/),
      url: `${server.refvid.deps.config.publicUrl}/v1/files/${file.file_id}/content`,
      content_type: "image/png", // from the bytes, not the declared type
      bytes: png.length,
      file_name: "sculpture.png",
    });
    expect(Date.parse(file.expires_at) - Date.parse(file.created_at)).toBe(24 * 3_600_000);

    // The upload URL needs the owner's key, so a run can only have read it from the blob store.
    const run = await t.client.run("lab-d/model-d/reference-to-video", {
      prompt: "A slow dolly shot around the sculpture",
      image_urls: [file.url],
      duration: "4s",
    } as never);
    expect(run.status).toBe("succeeded");
    const video = await fetch(run.output?.videos[0]?.url as string);
    expect(video.status).toBe(200);
    const path = join(server.refvid.deps.config.dataDir, "played.mp4");
    await writeFile(path, Buffer.from(await video.arrayBuffer()));
    expect(await probeDuration(path, { timeoutMs: 20_000 })).toBeCloseTo(4, 0);
  });

  it("takes a raw body with its name, and gives it back whole or by range to its owner only", async () => {
    const t = await server.tenant();
    const other = await server.tenant();
    const sandbox = await server.tenant({ environment: "test" });
    const png = await readFile(SCULPTURE);
    const res = await upload(t.apiKey, png, {
      "content-type": "image/png",
      "content-disposition": 'attachment; filename="ref.png"',
    });
    const file = (await res.json()) as FileUpload;
    expect(file).toMatchObject({ content_type: "image/png", bytes: png.length, file_name: "ref.png" });

    const path = `/v1/files/${file.file_id}/content`;
    const whole = await fetch(`${server.url}${path}`, { headers: { authorization: `Key ${t.apiKey}` } });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await whole.arrayBuffer()).equals(png)).toBe(true);
    const part = await fetch(`${server.url}${path}`, {
      headers: { authorization: `Key ${t.apiKey}`, range: "bytes=1-3" },
    });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe("PNG");

    for (const stranger of [other, sandbox]) {
      const read = await stranger.call("GET", path);
      expect(read.status).toBe(404);
      expect(read.body.error.type).toBe("file_not_found");
      const used = await stranger.call("POST", MODEL_D, { input: { prompt: "p", image_urls: [file.url] } });
      expect(used.status).toBe(404);
      expect(used.body.error).toMatchObject({ type: "file_not_found" });
      expect(used.body.error.message).toMatch(
        /^body\.input\.image_urls\[0\]: upload upload_\w+ does not exist/,
      );
      expect((await stranger.call("DELETE", `/v1/files/${file.file_id}`)).status).toBe(404);
    }
    // Nothing was admitted for the strangers: their wallets and slots are untouched.
    expect((await other.call("GET", "/v1/account")).body.concurrency.in_flight).toBe(0);

    const deleted = await t.call("DELETE", `/v1/files/${file.file_id}`);
    expect(deleted).toMatchObject({ status: 200, body: { file_id: file.file_id, deleted: true } });
    expect((await t.call("GET", path)).status).toBe(404);
    const gone = await t.call("POST", MODEL_D, { input: { prompt: "p", image_urls: [file.url] } });
    expect(gone.status).toBe(404);
  });

  it("replays a submit retried with its Idempotency-Key after the upload it names was deleted", async () => {
    const t = await server.tenant();
    const png = await readFile(SCULPTURE);
    const file = (await (await upload(t.apiKey, png, { "content-type": "image/png" })).json()) as FileUpload;
    const submit = { input: { prompt: "p", image_urls: [file.url], duration: "4s" } };
    const first = await t.call("POST", MODEL_D, submit, { "idempotency-key": "retry-after-delete" });
    expect(first.status).toBe(201);
    expect((await t.call("DELETE", `/v1/files/${file.file_id}`)).status).toBe(200);
    const retry = await t.call("POST", MODEL_D, submit, { "idempotency-key": "retry-after-delete" });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.body.run_id).toBe(first.body.run_id);
    // A new request naming the deleted upload is still refused.
    const fresh = await t.call("POST", MODEL_D, submit, { "idempotency-key": "another-key" });
    expect(fresh.status).toBe(404);
    expect(fresh.body.error.message).toMatch(
      /^body\.input\.image_urls\[0\]: upload upload_\w+ does not exist/,
    );
  });

  it("refuses what is not media, and keeps nothing", async () => {
    const t = await server.tenant();
    const before = await storedUploads();
    for (const body of [Buffer.from("<html><script>alert(1)</script></html>"), Buffer.alloc(0)]) {
      const res = await upload(t.apiKey, body, { "content-type": "image/png" });
      expect(res.status).toBe(415);
      const answer = (await res.json()) as any;
      isError(answer);
      const error = answer.error;
      expect(error.type).toBe("unsupported_media_type");
      expect(error.message).toMatch(/^file: /);
    }
    const form = new FormData();
    form.append("purpose", "reference");
    const missing = await upload(t.apiKey, form);
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).error.fields[0].field).toBe("body.file");
    expect(await storedUploads()).toEqual(before);
  });

  it("refuses a file name no store could keep with 400 naming body.file, from a header or a form", async () => {
    const t = await server.tenant();
    const png = await readFile(SCULPTURE);
    const before = await storedUploads();
    // The form is written by hand: FormData would not send a NUL in a part header's file name.
    const boundary = "refvid-nul-name";
    const form = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=utf-8''a%00b.png\r\n` +
          "Content-Type: image/png\r\n\r\n",
      ),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const answers = [
      await upload(t.apiKey, png, {
        "content-type": "image/png",
        "content-disposition": "attachment; filename*=utf-8''a%00b.png",
      }),
      await upload(t.apiKey, form, { "content-type": `multipart/form-data; boundary=${boundary}` }),
    ];
    for (const res of answers) {
      expect(res.status).toBe(400);
      const answer = (await res.json()) as any;
      isError(answer);
      expect(answer.error.fields).toEqual([
        { field: "body.file", message: "file name must not contain U+0000 (NUL)", rule: "unicode" },
      ]);
    }
    expect(await storedUploads()).toEqual(before);
    // A long name is kept cut to 255, whichever way it came.
    const long = new FormData();
    long.append("file", new Blob([png]), `${"n".repeat(300)}.png`);
    const kept = (await (await upload(t.apiKey, long)).json()) as FileUpload;
    expect(kept.file_name).toBe("n".repeat(255));
  });

  it("answers a form that ends in the middle of its file with 400, and keeps nothing", async () => {
    const t = await server.tenant();
    const before = await storedUploads();
    const png = await readFile(SCULPTURE);
    const boundary = "refvid-cut-form";
    // The body ends where the file's bytes stop: no closing boundary.
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.png"\r\n` +
          "content-type: image/png\r\n\r\n",
      ),
      png,
    ]);
    const res = await upload(t.apiKey, body, { "content-type": `multipart/form-data; boundary=${boundary}` });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as any;
    isError(answer);
    expect(answer.error.fields[0]).toMatchObject({ field: "body", rule: "multipart" });
    // A form with no boundary cannot be read at all.
    const unbounded = await upload(t.apiKey, body, { "content-type": "multipart/form-data" });
    expect(unbounded.status).toBe(400);
    expect(((await unbounded.json()) as any).error.fields[0]).toMatchObject({
      field: "body",
      rule: "multipart",
    });
    expect(await storedUploads()).toEqual(before);
  });

  it("cuts off a body past the cap for its kind with 413, announced or not, and keeps nothing", async () => {
    const t = await server.tenant();
    const before = await storedUploads();
    const png = await readFile(SCULPTURE);
    // A PNG that goes on past 30 MB, streamed without Content-Length.
    const cut = await sendSlowly(
      `${server.url}/v1/files`,
      { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      png,
      40,
    );
    expect(cut.status).toBe(413);
    isError(JSON.parse(cut.body));
    expect(JSON.parse(cut.body).error.message).toMatch(/^file: is larger than 30 MB/);
    // Announced bigger than any upload may be: refused before a byte of it is read.
    const announced = await sendSlowly(
      `${server.url}/v1/files`,
      {
        authorization: `Key ${t.apiKey}`,
        "content-type": "video/mp4",
        "content-length": String(300 * 1024 * 1024),
      },
      png,
      0,
    );
    expect(announced.status).toBe(413);
    expect(JSON.parse(announced.body).error.message).toMatch(/uploads take at most 200 MB/);
    // The server is fine, and nothing of either body is left behind.
    expect((await t.call("GET", "/v1/account")).status).toBe(200);
    expect(await storedUploads()).toEqual(before);
    expect(
      (await readdir(join(server.refvid.deps.config.dataDir, "files")).catch(() => [])).filter((n) =>
        n.includes(".partial-"),
      ),
    ).toEqual([]);
  });

  it("forgets uploads whose clients hang up mid-body: no file left open, no partial file", async () => {
    const t = await server.tenant();
    const before = await storedUploads();
    const watch = await watchStore(server.refvid.deps.config.dataDir);
    const png = await readFile(SCULPTURE);
    // Each announces the whole body, sends its first half, and is cut off once the server is
    // writing it to a partial file: 30 forms (the leak), and 10 raw bodies for comparison.
    const senders = startSending(server.url, t.apiKey, png, { forms: 30, raw: 10 });
    await watch.underWay(senders.length);
    for (const hangUp of senders) hangUp();
    await watch.expectAllClosed();
    expect(await storedUploads()).toEqual(before);
    // And it still takes uploads.
    const res = await upload(t.apiKey, png, { "content-type": "image/png" });
    expect(res.status).toBe(201);
  });
});

describe("an upload that stops sending", () => {
  const server = useTestRefvid({ REFVID_REQUEST_TIMEOUT_MS: "1500", REFVID_HEADERS_TIMEOUT_MS: "1500" });

  it("times out, and leaves no file open and no partial file", async () => {
    const t = await server.tenant();
    const watch = await watchStore(server.refvid.deps.config.dataDir);
    const png = await readFile(SCULPTURE);
    const senders = startSending(server.url, t.apiKey, png, { forms: 5, raw: 5 });
    await watch.underWay(senders.length);
    await watch.expectAllClosed();
    for (const hangUp of senders) hangUp();
    const res = await fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      body: png,
    });
    expect(res.status).toBe(201);
  });
});

describe("an upload slower than the minimum rate", () => {
  const MIN_BYTES_PER_S = 64 * 1024;
  const WINDOW_MS = 1_000;
  // The request timeout stays 30 s: these bodies never pause that long, so only the rate cuts them.
  const server = useTestRefvid({
    REFVID_MIN_BODY_BYTES_PER_S: String(MIN_BYTES_PER_S),
    REFVID_MIN_BODY_WINDOW_MS: String(WINDOW_MS),
  });

  it("is refused with 408 naming the rate, and leaves no file open and no partial file", async () => {
    const t = await server.tenant();
    const watch = await watchStore(server.refvid.deps.config.dataDir);
    const png = await readFile(SCULPTURE);
    // 8 KiB every 250 ms: 32 KiB a second, half the rate, with pauses far under any timeout.
    const tricklers = [
      ...Array.from({ length: 3 }, () => trickle(server.url, t.apiKey, png, "form")),
      ...Array.from({ length: 3 }, () => trickle(server.url, t.apiKey, png, "raw")),
    ];
    await watch.underWay(tricklers.length);
    // Refused within a few windows of the client's time, with room for a busy machine.
    const deadline = new Promise<null>((resolve) => setTimeout(() => resolve(null), WINDOW_MS * 15));
    const answers = await Promise.all(tricklers.map((t) => Promise.race([t.answer, deadline])));
    for (const trickler of tricklers) trickler.stop();
    expect(answers.map((a) => a?.status ?? "no answer")).toEqual(Array(tricklers.length).fill(408));
    for (const answer of answers) {
      const body = JSON.parse(answer?.body ?? "{}");
      isError(body);
      expect(body.error).toMatchObject({ type: "request_timeout", code: 408 });
      expect(body.error.message).toMatch(new RegExp(`slower than the ${MIN_BYTES_PER_S} bytes a second`));
    }
    await watch.expectAllClosed();
    // A body sent at once is taken.
    const res = await fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      body: png,
    });
    expect(res.status).toBe(201);
  });
});

/**
 * POSTs `file` and 1 MiB more to /v1/files as a form or a raw body, 8 KiB every 250 ms, until
 * answered or stopped; `answer` is the server's answer and `stop` hangs up.
 */
function trickle(url: string, apiKey: string, file: Buffer, as: "form" | "raw") {
  const padded = Buffer.concat([file, Buffer.alloc(1024 * 1024)]);
  const { req, head, tail } = uploadRequest(url, apiKey, as, padded.length);
  const body = Buffer.concat([Buffer.from(head), padded, Buffer.from(tail)]);
  let sent = 0;
  const drip = setInterval(() => {
    if (req.destroyed || sent >= body.length) return clearInterval(drip);
    req.write(body.subarray(sent, sent + 8 * 1024));
    sent += 8 * 1024;
  }, 250);
  const answer = new Promise<{ status: number; body: string }>((resolve) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
  });
  return {
    answer,
    stop: () => {
      clearInterval(drip);
      req.destroy();
    },
  };
}

const HANG_UP_BOUNDARY = "refvid-hang-up";

/**
 * Starts POSTs to /v1/files of `file`, so many as forms and so many as raw bodies, each announcing
 * the whole body but sending only the first half of the file; each function returned hangs up one
 * (as does an answer).
 */
function startSending(
  url: string,
  apiKey: string,
  file: Buffer,
  count: { forms: number; raw: number },
): (() => void)[] {
  return [
    ...Array.from({ length: count.forms }, () => startOne(url, apiKey, file, "form")),
    ...Array.from({ length: count.raw }, () => startOne(url, apiKey, file, "raw")),
  ];
}

/** What goes before and after a file sent as a form or as the raw body, and its content type. */
function framing(as: "form" | "raw"): [head: string, tail: string, contentType: string] {
  return as === "form"
    ? [
        `--${HANG_UP_BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.png"\r\n` +
          "content-type: image/png\r\n\r\n",
        `\r\n--${HANG_UP_BOUNDARY}--\r\n`,
        `multipart/form-data; boundary=${HANG_UP_BOUNDARY}`,
      ]
    : ["", "", "image/png"];
}

/** A POST to /v1/files announcing a file of `fileBytes` framed as `as`, and that framing to send. */
function uploadRequest(url: string, apiKey: string, as: "form" | "raw", fileBytes: number) {
  const [head, tail, contentType] = framing(as);
  const req = request(`${url}/v1/files`, {
    method: "POST",
    agent: false,
    headers: {
      authorization: `Key ${apiKey}`,
      "content-type": contentType,
      "content-length": String(Buffer.byteLength(head) + fileBytes + Buffer.byteLength(tail)),
    },
  });
  req.on("error", () => {}); // the hang-up is the point (or the server's close after its answer)
  return { req, head, tail };
}

function startOne(url: string, apiKey: string, file: Buffer, as: "form" | "raw"): () => void {
  const { req, head } = uploadRequest(url, apiKey, as, file.length);
  req.on("response", (res) => {
    res.resume();
    req.destroy(); // answered before the body was sent (a timeout): hang up at once
  });
  req.write(Buffer.concat([Buffer.from(head), file.subarray(0, file.length / 2)]));
  return () => req.destroy();
}

/**
 * Watches the local blob store of a refvid running in this process: the partial files in it, and
 * what the process holds open, against what it held when the watch began.
 */
async function watchStore(dataDir: string) {
  const files = join(dataDir, "files");
  const partials = async () =>
    (await readdir(files).catch(() => [] as string[])).filter((n) => n.includes(".partial-"));
  const openBefore = (await openFiles()).length;
  return {
    /** Waits until `count` partial files are being written. */
    async underWay(count: number) {
      await eventually(
        async () => ((await partials()).length >= count ? true : undefined),
        20_000,
        `${count} uploads under way`,
      );
    },
    /** Waits until no file of the store is open or partial, and no more is open than before. */
    async expectAllClosed() {
      let left = { filesOpenInStore: -1, partialFiles: -1, extraOpenFiles: -1 };
      await eventually(
        async () => {
          const open = await openFiles();
          left = {
            filesOpenInStore: open.filter((target) => target.startsWith(files)).length,
            partialFiles: (await partials()).length,
            extraOpenFiles: Math.max(0, open.length - openBefore),
          };
          return left.filesOpenInStore === 0 && left.partialFiles === 0 && left.extraOpenFiles <= 2
            ? true
            : undefined;
        },
        20_000,
        "the uploads' files closed and removed",
      ).catch(() => {}); // the figures left say what stayed open
      expect(left).toMatchObject({ filesOpenInStore: 0, partialFiles: 0 });
      expect(left.extraOpenFiles).toBeLessThanOrEqual(2);
    },
  };
}

describe("an upload past its expiry", () => {
  const clock = new ManualClock();
  const server = useTestRefvid({ REFVID_UPLOAD_TTL_HOURS: "2" }, { clock, scheduler: clock });

  it("can no longer be read or used, and the sweep deletes it", async () => {
    const t = await server.tenant();
    const res = await fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      body: await readFile(SCULPTURE),
    });
    const file = (await res.json()) as FileUpload;
    expect(Date.parse(file.expires_at) - Date.parse(file.created_at)).toBe(2 * 3_600_000);
    const input = { prompt: "p", image_urls: [file.url] };
    expect((await t.call("POST", MODEL_D, { input })).status).toBe(201);

    await clock.advance(2 * 3_600_000);
    const used = await t.call("POST", MODEL_D, { input });
    expect(used.status).toBe(404);
    expect(used.body.error.message).toMatch(/^body\.input\.image_urls\[0\]: upload upload_\w+ expired at /);
    expect((await t.call("GET", `/v1/files/${file.file_id}/content`)).status).toBe(404);
    // The sweep runs every ten minutes: the bytes and the record go. A sweep's disk work is real
    // I/O, which the manual clock does not wait for: one still running when the clock moves sets
    // its next run from the moved time. So the clock moves ten minutes at a time until a sweep
    // has deleted the bytes, however long the disk takes on a busy machine.
    await eventually(
      async () => {
        await clock.advance(10 * 60_000);
        return (await server.refvid.deps.blobs.stat(file.file_id)) === null ? true : undefined;
      },
      30_000,
      "the upload's bytes to be deleted",
    );
  });
});
