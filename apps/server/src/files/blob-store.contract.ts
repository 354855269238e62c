/** The BlobStore contract: every adapter runs it. */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import type { BlobStore } from "./blob-store.js";

export function describeBlobStoreContract(name: string, make: () => Promise<BlobStore>): void {
  describe(`${name} implements BlobStore`, () => {
    const source = async (content: string) => {
      const dir = await mkdtemp(join(tmpdir(), "blob-src-"));
      const path = join(dir, "in.mp4");
      await writeFile(path, content);
      return path;
    };

    it("keeps a file under its id and reads it whole or by range", async () => {
      const blobs = await make();
      const put = await blobs.put("file_abcdef0123", await source("0123456789"));
      expect(put).toEqual({ size: 10 });
      expect(await blobs.stat("file_abcdef0123")).toEqual({ size: 10 });
      expect(await text(blobs.read("file_abcdef0123"))).toBe("0123456789");
      expect(await text(blobs.read("file_abcdef0123", { start: 2, end: 4 }))).toBe("234");
    });

    it("takes the source away, so a run's scratch copy is not left behind", async () => {
      const blobs = await make();
      const path = await source("x");
      await blobs.put("file_moved000001", path);
      await expect(readFile(path)).rejects.toThrow();
    });

    it("forgets deleted and unknown files", async () => {
      const blobs = await make();
      await blobs.put("file_deleteme001", await source("x"));
      await blobs.delete("file_deleteme001");
      expect(await blobs.stat("file_deleteme001")).toBeNull();
      expect(await blobs.stat("file_neverexisted")).toBeNull();
      await blobs.delete("file_neverexisted");
    });

    it("deletes files stored before a given time, and only those", async () => {
      const blobs = await make();
      await blobs.put("file_oldfile00001", await source("old"));
      const cut = new Date(Date.now() + 1000);
      expect(await blobs.deleteOlderThan(new Date(Date.now() - 60_000))).toBe(0);
      expect(await blobs.deleteOlderThan(cut)).toBe(1);
      expect(await blobs.stat("file_oldfile00001")).toBeNull();
    });

    it("refuses ids that could name a path outside the store", async () => {
      const blobs = await make();
      expect(await blobs.stat("../etc/passwd")).toBeNull();
      expect(await blobs.stat("file_../../x")).toBeNull();
      await expect(blobs.put("../escape", await source("x"))).rejects.toThrow(/invalid file id/);
    });
  });
}
