import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { AppDeps } from "../deps.js";
import { LocalBlobStore } from "./blob-store.js";
import { RetentionSweep } from "./retention.js";

describe("RetentionSweep", () => {
  it("deletes outputs older than the retention period, keeping newer ones", async () => {
    const dir = await mkdtemp(join(tmpdir(), "retention-"));
    const blobs = new LocalBlobStore(join(dir, "files"));
    const source = join(dir, "in.mp4");
    await writeFile(source, "video");
    await blobs.put("file_keepmefor1h", source);
    let now = new Date();
    const deps = {
      blobs,
      clock: { now: () => now },
      config: { fileRetentionHours: 1 },
      logger: pino({ level: "silent" }),
    } as unknown as AppDeps;
    const sweep = new RetentionSweep(deps);
    expect(await sweep.sweep()).toBe(0);
    expect(await blobs.stat("file_keepmefor1h")).not.toBeNull();
    now = new Date(Date.now() + 2 * 3_600_000);
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("file_keepmefor1h")).toBeNull();
  });
});
