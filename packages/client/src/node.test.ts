import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, open, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { API_KEY, sendJson, startServer } from "../test/server.js";
import { createRefvidClient } from "./client.js";
import { RefvidError } from "./errors.js";
import { contentTypeOf, fileFromPath } from "./node.js";

const dir = mkdtempSync(join(tmpdir(), "refvid-client-node-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0xff, 0xfe]);

/** A file of `size` bytes that takes no disk (sparse, read back as zeros) but begins as a PNG. */
async function sparseFile(name: string, size: number): Promise<string> {
  const path = join(dir, name);
  const handle = await open(path, "w");
  await handle.write(PNG.subarray(0, 8));
  await handle.truncate(size);
  await handle.close();
  return path;
}

describe("contentTypeOf", () => {
  it.each([
    ["a.jpg", "image/jpeg"],
    ["a.JPEG", "image/jpeg"],
    ["dir.v2/a.png", "image/png"],
    ["a.webp", "image/webp"],
    ["a.bmp", "image/bmp"],
    ["a.tif", "image/tiff"],
    ["a.tiff", "image/tiff"],
    ["a.gif", "image/gif"],
    ["a.heic", "image/heic"],
    ["a.HEIF", "image/heif"],
    ["a.mp4", "video/mp4"],
    ["a.mov", "video/quicktime"],
    ["a.mp3", "audio/mpeg"],
    ["a.wav", "audio/wav"],
    ["a.txt", "application/octet-stream"],
    ["a.png.gz", "application/octet-stream"],
    ["png", "application/octet-stream"],
    [".png", "application/octet-stream"], // a dotfile named .png has no extension
  ])("%s is %s", (path, type) => {
    expect(contentTypeOf(path)).toBe(type);
  });
});

describe("fileFromPath", () => {
  it("makes a File of the file on disk: its base name, size, type by extension and bytes", async () => {
    const path = join(dir, "sculpture.png");
    await writeFile(path, PNG);
    const file = await fileFromPath(path);
    expect(file).toBeInstanceOf(File);
    expect(file).toMatchObject({ name: "sculpture.png", size: PNG.length, type: "image/png" });
    expect(file.lastModified).toBe(Math.trunc((await stat(path)).mtimeMs));
    expect(Buffer.from(await file.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it("takes the type from the options, and falls back to application/octet-stream", async () => {
    const path = join(dir, "clip.bin");
    await writeFile(path, PNG);
    expect((await fileFromPath(path)).type).toBe("application/octet-stream");
    expect((await fileFromPath(path, { contentType: "video/mp4" })).type).toBe("video/mp4");
  });

  it("rejects a missing file or a directory, naming the path", async () => {
    const missing = join(dir, "no-such.png");
    await expect(fileFromPath(missing)).rejects.toMatchObject({
      message: `cannot read ${missing}: no such file`,
      code: "ENOENT",
      path: missing,
    });
    await expect(fileFromPath(join(dir, "no-such-dir", "a.png"))).rejects.toThrow(/no such file$/);
    const folder = join(dir, "folder.png");
    await mkdir(folder);
    await expect(fileFromPath(folder)).rejects.toThrow(`cannot read ${folder}: not a file`);
  });

  it("uploads with the client as the raw bytes, named and typed after the file", async () => {
    const path = join(dir, "Gemälde.png");
    await writeFile(path, PNG);
    const server = await startServer((_req, res) => sendJson(res, 201, { file_id: "upload_1" }));
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await client.uploadFile(await fileFromPath(path));
    const [request] = server.requests;
    expect(request?.bytes.equals(PNG)).toBe(true);
    expect(request?.headers).toMatchObject({
      "content-type": "image/png",
      "content-length": String(PNG.length),
      "content-disposition": `attachment; filename="Gemalde.png"; filename*=UTF-8''Gem%C3%A4lde.png`,
    });
  });

  it("streams a large file from disk: the memory in use stays far below its size", async () => {
    const size = 128 * 1024 * 1024;
    const path = await sparseFile("large.mp4", size);

    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().arrayBuffers;
    let received = 0;
    let peak = 0;
    const server = createServer((req, res) => {
      req.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
      req.on("end", () => sendJson(res, 201, { file_id: "upload_1", bytes: received }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const sample = setInterval(() => {
      gc();
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    }, 50);
    onTestFinished(() => clearInterval(sample));

    const { port } = server.address() as AddressInfo;
    const client = createRefvidClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY });
    await expect(client.uploadFile(await fileFromPath(path))).resolves.toMatchObject({ bytes: size });
    expect(received).toBe(size);
    // Buffered whole (Node's fetch following redirects, a clone for a retry), it would be ~128 MB.
    expect(peak - before).toBeLessThan(size / 4);
  }, 30_000);

  it("rejects at once with the 413 of a server that answers before reading the body", async () => {
    const path = await sparseFile("too-large.png", 512 * 1024 * 1024);
    let received = 0;
    const server = createServer((req, res) => {
      const message = `file: the body is ${req.headers["content-length"]} bytes; uploads take at most 200 MB.`;
      sendJson(res, 413, { error: { type: "payload_too_large", code: 413, message } });
      // It reads and drops what is still sent, so the connection stays up until the client stops.
      req.on("data", (chunk: Buffer) => {
        received += chunk.length;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const { port } = server.address() as AddressInfo;
    const client = createRefvidClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY });
    const error = await client.uploadFile(await fileFromPath(path)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefvidError);
    expect(error).toMatchObject({
      status: 413,
      message: expect.stringMatching(/^file: the body is 536870912 bytes/),
    });
    expect(received).toBeLessThan(512 * 1024 * 1024); // the client stopped sending
  });
});
