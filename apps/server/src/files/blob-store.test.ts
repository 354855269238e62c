import { mkdir, mkdtemp, readdir, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeBlobStoreContract } from "./blob-store.contract.js";
import { LocalBlobStore } from "./local-blob-store.js";

describeBlobStoreContract(
  "LocalBlobStore",
  async () => new LocalBlobStore(join(await mkdtemp(join(tmpdir(), "blobs-")), "files")),
);

describe("LocalBlobStore's leftovers", () => {
  it("sweeps a partial file a dead process left once it has been idle an hour, whatever the kind's retention", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "blobs-")), "files");
    const blobs = new LocalBlobStore(dir);
    await mkdir(dir, { recursive: true });
    const stale = join(dir, "upload_deadprocess.partial-0a1b2c3d");
    const fresh = join(dir, "upload_stillarriving.partial-4e5f6a7b");
    const video = join(dir, "file_deadprocess.mp4.partial-0a1b2c3d");
    for (const path of [stale, fresh, video]) await writeFile(path, "bytes");
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    await utimes(stale, twoHoursAgo, twoHoursAgo);
    await utimes(video, twoHoursAgo, twoHoursAgo);
    // Retention a year back: no complete upload would go, but the idle partial does.
    const yearAgo = new Date(Date.now() - 366 * 24 * 3_600_000);
    expect(await blobs.deleteOlderThan("upload", yearAgo)).toBe(0);
    expect((await readdir(dir)).sort()).toEqual([video, fresh].map((p) => p.slice(dir.length + 1)).sort());
    await blobs.deleteOlderThan("file", yearAgo);
    expect(await readdir(dir)).toEqual([fresh.slice(dir.length + 1)]);
  });
});
