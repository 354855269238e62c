/**
 * Local files as references (`refvid run … --image ./a.png`), and `refvid files upload|delete`,
 * against the suite's real server. A recording proxy in front of it shows what the CLI sent.
 */
import { copyFileSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Account, cli, IMAGE, newAccount, pty, tempDir } from "./cli.js";

const REFS = fileURLToPath(new URL("../../../docs/examples/refs/", import.meta.url));
const PNG = readFileSync(join(REFS, "sculpture.png"));
/** The sample image's size in bytes, and as the CLI tells it (`68 KB`). */
const PNG_BYTES = PNG.length;
const PNG_SIZE = `${Math.round(PNG_BYTES / 1000)} KB`;
const MP3 = readFileSync(join(REFS, "melody.mp3"));

/** A request as the proxy passed it on; `json` is the body of a JSON request. */
interface Seen {
  method: string;
  path: string;
  json?: any;
}

/** A proxy to the suite's server that notes each request (and JSON bodies) on the way. */
async function recordingProxy(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const upstream = new URL(inject("baseUrl"));
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const entry: Seen = { method: req.method ?? "", path: req.url ?? "" };
    seen.push(entry);
    const isJson = (req.headers["content-type"] ?? "").startsWith("application/json");
    const chunks: Buffer[] = [];
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.destroy());
    req.on("data", (chunk: Buffer) => {
      if (isJson) chunks.push(chunk);
      forward.write(chunk);
    });
    req.on("end", () => {
      if (isJson && chunks.length > 0) entry.json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      forward.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let account: Account;
let proxy: Awaited<ReturnType<typeof recordingProxy>>;
/** A directory with local.png and melody.mp3 (the examples), a text file and a folder. */
let dir: string;
beforeAll(async () => {
  account = await newAccount();
  proxy = await recordingProxy();
  dir = tempDir("refs-");
  copyFileSync(join(REFS, "sculpture.png"), join(dir, "local.png"));
  copyFileSync(join(REFS, "melody.mp3"), join(dir, "melody.mp3"));
  writeFileSync(join(dir, "notes.txt"), "not a picture\n");
  // A PNG that goes on past the 30 MB images may be: sparse, so it takes no disk.
  writeFileSync(join(dir, "huge.png"), PNG.subarray(0, 8));
  truncateSync(join(dir, "huge.png"), 40_000_000);
  mkdirSync(join(dir, "folder.png"));
});
afterAll(() => proxy?.close());

/** `refvid args…` through the proxy, in the directory of the files; what it sent, from the start. */
async function viaProxy(args: string[]) {
  const from = proxy.seen.length;
  const result = await cli(args, { env: { ...account.env, REFVID_BASE_URL: proxy.url }, cwd: dir });
  return { ...result, sent: proxy.seen.slice(from) };
}

const uploadUrl = (fileId: string) => `${inject("baseUrl")}/v1/files/${fileId}/content`;
const calls = (sent: Seen[]) => sent.map((s) => `${s.method} ${s.path}`);

describe("refvid run with local files", () => {
  it("uploads each local file once the price is confirmed, and submits the uploads' URLs", async () => {
    const result = await viaProxy([
      "run",
      "model-d",
      "--prompt",
      "p",
      ...["--image", "./local.png", "--image", IMAGE, "--image", "./local.png"],
      "--yes",
      "--json",
    ]);
    expect(result.code, result.stderr).toBe(0);
    // Only the run is on stdout; the price, the upload and the run id are on stderr, in that order.
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "succeeded" });
    const fileId = new RegExp(`^Uploaded \\./local\\.png \\(${PNG_SIZE}\\) as (upload_\\S+)$`, "m").exec(
      result.stderr,
    )?.[1] as string;
    expect(fileId).toBeDefined();
    expect(result.stderr).toMatch(/^Price: 0\.568 USD.*\nUploaded .*\nSubmitted run_/m);

    expect(calls(result.sent).slice(0, 4)).toEqual([
      "GET /v1/models",
      "POST /v1/pricing/preview",
      "POST /v1/files", // the same file given twice goes up once
      "POST /v1/run/lab-d/model-d/reference-to-video",
    ]);
    // Priced with a stand-in for the file (the price depends only on there being an image).
    const [preview, submit] = result.sent.filter((s) => s.json);
    expect(preview?.json.input.image_urls).toEqual([
      "https://local-file.invalid/1",
      IMAGE,
      "https://local-file.invalid/1",
    ]);
    expect(submit?.json.input.image_urls).toEqual([uploadUrl(fileId), IMAGE, uploadUrl(fileId)]);

    // The upload is the caller's file, named after it.
    const content = await fetch(uploadUrl(fileId), { headers: { authorization: `Key ${account.key}` } });
    expect(Buffer.from(await content.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it("uploads a file of each kind after its own flag, with human output", async () => {
    const result = await viaProxy([
      "run",
      "model-a",
      "--prompt",
      "p",
      "--duration",
      "4",
      "--image",
      "local.png",
      "--audio",
      `file://${join(dir, "melody.mp3")}`,
      "--yes",
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/✔ run_\S+ succeeded/);
    expect(result.stderr).toMatch(new RegExp(`^Uploaded local\\.png \\(${PNG_SIZE}\\) as upload_\\S+$`, "m"));
    const melody = join(dir, "melody.mp3").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    expect(result.stderr).toMatch(new RegExp(`^Uploaded ${melody} \\(33 KB\\) as upload_\\S+$`, "m"));
    const submit = result.sent.find((s) => s.path.startsWith("/v1/run/"));
    expect(submit?.json.input.image_urls).toEqual([
      expect.stringMatching(/\/v1\/files\/upload_\S+\/content$/),
    ]);
    expect(submit?.json.input.audio_urls).toEqual([
      expect.stringMatching(/\/v1\/files\/upload_\S+\/content$/),
    ]);
  });

  it("in a terminal, uploads nothing when the price is declined", async () => {
    const from = proxy.seen.length;
    const session = pty(["run", "model-d", "--prompt", "p", "--image", "./local.png"], {
      env: { ...account.env, REFVID_BASE_URL: proxy.url },
      cwd: dir,
    });
    await session.waitFor("Submit this run for 0.568 USD?");
    session.type("n\r");
    const { code, output } = await session.done;
    expect(code).toBe(0);
    expect(output).toContain("Not submitted.");
    expect(output).not.toContain("Uploaded");
    expect(calls(proxy.seen.slice(from))).toEqual(["GET /v1/models", "POST /v1/pricing/preview"]);
  });

  it.each([
    [
      "a missing file",
      "./missing.png",
      /^error: --image \.\/missing\.png: no such file \(a reference is an http/m,
    ],
    ["a folder", "folder.png", /^error: --image folder\.png: not a file$/m],
  ])(
    "refuses %s as bad usage (exit 2), before anything is priced or uploaded",
    async (_name, path, message) => {
      const result = await viaProxy(["run", "model-d", "--prompt", "p", "--image", path, "--yes", "--json"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe("");
      expect(calls(result.sent)).toEqual(["GET /v1/models"]);
    },
  );

  it("keeps URLs of other schemes for the schema to refuse, not taken for paths", async () => {
    const result = await viaProxy(["run", "model-d", "--prompt", "p", "--image", "ftp://x/a.png", "--yes"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--image "ftp:\/\/x\/a\.png" must be an http:\/\/ or https:\/\/ URL/);
  });
});

describe("refvid price with local files", () => {
  it("checks the file but uploads nothing: a price does not depend on the file", async () => {
    const result = await viaProxy(["price", "model-d", "--prompt", "p", "--image", "./local.png", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ amount: "0.568" });
    expect(result.stderr).toContain("Not uploading ./local.png: a price depends on which kinds of reference");
    expect(calls(result.sent)).toEqual(["GET /v1/models", "POST /v1/pricing/preview"]);

    const missing = await viaProxy(["price", "model-d", "--prompt", "p", "--image", "./missing.png"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--image ./missing.png: no such file");
  });
});

describe("refvid files", () => {
  it("uploads files and prints each upload; --json prints the upload, or a list of them", async () => {
    const human = await viaProxy(["files", "upload", "./local.png", "melody.mp3"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toMatch(
      new RegExp(
        `^Uploaded \\./local\\.png \\(${PNG_SIZE}\\) as upload_\\S+\nUploaded melody\\.mp3 \\(33 KB\\) as upload_\\S+\n$`,
      ),
    );
    const blocks = human.stdout.trimEnd().split("\n\n");
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(
      new RegExp(
        `^file\\s+upload_\\S+\nurl\\s+http://\\S+/content\ntype\\s+image/png\nsize\\s+${PNG_SIZE} \\(${PNG_BYTES} bytes\\)\nname\\s+local\\.png\nexpires\\s+\\d{4}-`,
      ),
    );
    expect(blocks[1]).toMatch(/type\s+audio\/mpeg\nsize\s+33 KB \(32644 bytes\)\nname\s+melody\.mp3/);

    const one = await viaProxy(["files", "upload", "local.png", "--json"]);
    expect(one.code, one.stderr).toBe(0);
    const upload = JSON.parse(one.stdout);
    expect(upload).toMatchObject({
      file_id: expect.stringMatching(/^upload_/),
      content_type: "image/png",
      bytes: PNG.length,
      file_name: "local.png",
    });
    expect(upload.url).toBe(uploadUrl(upload.file_id));
    const several = await viaProxy(["files", "upload", "local.png", "melody.mp3", "--json"]);
    expect(JSON.parse(several.stdout).map((u: { bytes: number }) => u.bytes)).toEqual([
      PNG.length,
      MP3.length,
    ]);
  });

  it("deletes an upload; one that is gone is the API's 404 (exit 3)", async () => {
    const { file_id: fileId } = JSON.parse(
      (await viaProxy(["files", "upload", "local.png", "--json"])).stdout,
    );
    const deleted = await viaProxy(["files", "delete", fileId]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`Deleted ${fileId}.\n`);
    const again = await viaProxy(["files", "delete", fileId, "--json"]);
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout).error).toMatchObject({ type: "file_not_found", status: 404 });
    const json = JSON.parse((await viaProxy(["files", "upload", "local.png", "--json"])).stdout);
    const gone = await viaProxy(["files", "delete", json.file_id, "--json"]);
    expect(JSON.parse(gone.stdout)).toEqual({ file_id: json.file_id, deleted: true });
  });

  it("refuses what is not media with the server's 415 and what is too large with its 413 (exit 3), and checks every path before sending any", async () => {
    const text = await viaProxy(["files", "upload", "notes.txt"]);
    expect(text.code).toBe(3);
    expect(text.stderr).toMatch(
      /^error: file: is not an image, video or audio file .*\(unsupported_media_type, HTTP 415\)/,
    );

    // Straight to the server: it answers once 30 MB are in, while the rest is still being sent.
    const huge = await cli(["files", "upload", "huge.png", "--json"], { env: account.env, cwd: dir });
    expect(huge.code).toBe(3);
    expect(huge.stderr).toMatch(/^error: file: is larger than 30 MB .*\(payload_too_large, HTTP 413\)/);
    expect(JSON.parse(huge.stdout).error).toMatchObject({ type: "payload_too_large", status: 413 });

    const missing = await viaProxy(["files", "upload", "local.png", "missing.mp4"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: missing\.mp4: no such file/m);
    expect(calls(missing.sent)).toEqual([]);
  });
});
