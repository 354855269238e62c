/** The BlobStore contract: every adapter runs it (the local directory, and S3 on a real server). */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { buffer, text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import type { BlobStore } from "./blob-store.js";

/** Ids unique per test, so adapters that share a bucket between tests never see each other's blobs. */
const id = (kind: "file" | "upload") => `${kind}_${randomBytes(9).toString("base64url")}`;

export function describeBlobStoreContract(name: string, make: () => Promise<BlobStore>): void {
  describe(`${name} implements BlobStore`, () => {
    const source = async (content: string | Buffer) => {
      const dir = await mkdtemp(join(tmpdir(), "blob-src-"));
      const path = join(dir, "in.mp4");
      await writeFile(path, content);
      return path;
    };

    it("keeps a file under its id and reads it whole or by range", async () => {
      const blobs = await make();
      const fileId = id("file");
      expect(await blobs.put(fileId, await source("0123456789"))).toEqual({
        size: 10,
        contentType: "video/mp4",
      });
      expect(await blobs.stat(fileId)).toEqual({ size: 10, contentType: "video/mp4" });
      expect(await text(await blobs.read(fileId))).toBe("0123456789");
      expect(await text(await blobs.read(fileId, { start: 2, end: 4 }))).toBe("234");
      expect(await text(await blobs.read(fileId, { start: 9, end: 9 }))).toBe("9");
    });

    it("takes the source away, so a run's scratch copy is not left behind", async () => {
      const blobs = await make();
      const path = await source("x");
      await blobs.put(id("file"), path);
      await expect(readFile(path)).rejects.toThrow();
    });

    it("stores a stream with its content type, byte for byte, across several multipart parts", async () => {
      const blobs = await make();
      const uploadId = id("upload");
      const bytes = randomBytes(17 * 1024 * 1024 + 3);
      const chunks = function* () {
        for (let at = 0; at < bytes.length; at += 1024 * 1024) yield bytes.subarray(at, at + 1024 * 1024);
      };
      const put = await blobs.put(uploadId, Readable.from(chunks()), { contentType: "image/png" });
      expect(put).toEqual({ size: bytes.length, contentType: "image/png" });
      expect(await blobs.stat(uploadId)).toEqual({ size: bytes.length, contentType: "image/png" });
      expect((await buffer(await blobs.read(uploadId))).equals(bytes)).toBe(true);
      const tail = await buffer(
        await blobs.read(uploadId, { start: bytes.length - 5, end: bytes.length - 1 }),
      );
      expect(tail.equals(bytes.subarray(bytes.length - 5))).toBe(true);
    });

    it("keeps nothing of a stream that fails part way", async () => {
      const blobs = await make();
      const uploadId = id("upload");
      const failing = Readable.from(
        (async function* () {
          yield randomBytes(6 * 1024 * 1024);
          yield randomBytes(6 * 1024 * 1024);
          throw new Error("client went away");
        })(),
      );
      await expect(blobs.put(uploadId, failing, { contentType: "video/mp4" })).rejects.toThrow(
        /client went away/,
      );
      expect(await blobs.stat(uploadId)).toBeNull();
    });

    it("keeps nothing of a stream closed before its end, and does not wait for the rest", async () => {
      const blobs = await make();
      const uploadId = id("upload");
      // A request whose client hung up: the stream closes without an error and without an end.
      const cut = new Readable({ read() {} });
      cut.push(randomBytes(64 * 1024));
      setTimeout(() => cut.destroy(), 50);
      await expect(blobs.put(uploadId, cut, { contentType: "video/mp4" })).rejects.toThrow();
      expect(await blobs.stat(uploadId)).toBeNull();
    });

    it("forgets deleted and unknown blobs", async () => {
      const blobs = await make();
      const fileId = id("file");
      await blobs.put(fileId, await source("x"));
      await blobs.delete(fileId);
      expect(await blobs.stat(fileId)).toBeNull();
      expect(await blobs.stat("file_neverexisted")).toBeNull();
      await expect(blobs.read("file_neverexisted")).rejects.toThrow();
      await blobs.delete("file_neverexisted");
    });

    it("deletes the blobs of one kind stored before a given time, and only those", async () => {
      const blobs = await make();
      const fileId = id("file");
      const uploadId = id("upload");
      await blobs.put(fileId, await source("old"));
      await blobs.put(uploadId, Readable.from([Buffer.from("ref")]), { contentType: "audio/mpeg" });
      // Stores keep time to the second at best (S3's LastModified): cut well clear of it.
      const later = new Date(Date.now() + 5_000);
      expect(await blobs.deleteOlderThan("file", new Date(Date.now() - 60_000))).toBe(0);
      expect(await blobs.deleteOlderThan("upload", later)).toBeGreaterThanOrEqual(1);
      expect(await blobs.stat(uploadId)).toBeNull();
      expect(await blobs.stat(fileId)).toEqual({ size: 3, contentType: "video/mp4" });
      expect(await blobs.deleteOlderThan("file", later)).toBeGreaterThanOrEqual(1);
      expect(await blobs.stat(fileId)).toBeNull();
    });

    it("refuses ids that could name a path or key outside the store", async () => {
      const blobs = await make();
      expect(await blobs.stat("../etc/passwd")).toBeNull();
      expect(await blobs.stat("file_../../x")).toBeNull();
      await expect(blobs.put("../escape", await source("x"))).rejects.toThrow(/invalid blob id/);
      await expect(blobs.read("upload_a/../../b")).rejects.toThrow(/invalid blob id/);
    });
  });
}
