import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { MemoryStore } from "@refvid/store";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { AppDeps } from "../deps.js";
import { LocalBlobStore } from "./local-blob-store.js";
import { RetentionSweep } from "./retention.js";

describe("RetentionSweep", () => {
  it("deletes outputs after their retention and uploads after their TTL, keeping newer ones", async () => {
    const dir = await mkdtemp(join(tmpdir(), "retention-"));
    const blobs = new LocalBlobStore(join(dir, "files"));
    const source = join(dir, "in.mp4");
    await writeFile(source, "video");
    await blobs.put("file_keepmefor3h", source);
    await blobs.put("upload_keepmefor1h", Readable.from([Buffer.from("png")]), { contentType: "image/png" });
    let now = new Date();
    const deps = {
      blobs,
      store: new MemoryStore(),
      clock: { now: () => now },
      config: { fileRetentionHours: 3, uploadTtlHours: 1 },
      logger: pino({ level: "silent" }),
    } as unknown as AppDeps;
    const sweep = new RetentionSweep(deps);
    expect(await sweep.sweep()).toBe(0);
    now = new Date(Date.now() + 2 * 3_600_000);
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("upload_keepmefor1h")).toBeNull();
    expect(await blobs.stat("file_keepmefor3h")).not.toBeNull();
    now = new Date(Date.now() + 4 * 3_600_000);
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("file_keepmefor3h")).toBeNull();
  });
});
