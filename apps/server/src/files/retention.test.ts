import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { MemoryStore } from "@refvid/store";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { systemScheduler } from "../clock.js";
import { LocalBlobStore } from "./local-blob-store.js";
import { MAX_UPLOAD_TTL_HOURS, type RetentionDeps, RetentionSweep } from "./retention.js";

const HOUR = 3_600_000;

/** A sweep over a local blob store and a MemoryStore, at a clock the test moves. */
async function setUp(config: { fileRetentionHours: number; uploadTtlHours: number }) {
  const dir = await mkdtemp(join(tmpdir(), "retention-"));
  const blobs = new LocalBlobStore(join(dir, "files"));
  const store = new MemoryStore();
  const start = Date.now();
  const clock = { at: start, now: () => new Date(clock.at) };
  const deps: RetentionDeps = {
    blobs,
    store,
    clock,
    scheduler: systemScheduler,
    config,
    logger: pino({ level: "silent" }),
  };
  const owner = { organizationId: "org_1", environment: "live" as const };
  await store.createOrganization({
    id: "org_1",
    name: "acme",
    webhookSecrets: { live: "whsec_eA==", test: "whsec_eQ==" },
    now: new Date(start),
  });
  /** Bytes, and a record expiring `expiresInHours` from now unless that is null (orphan bytes). */
  const upload = async (id: string, expiresInHours: number | null) => {
    await blobs.put(id, Readable.from([Buffer.from("png")]), { contentType: "image/png" });
    if (expiresInHours === null) return;
    const roomy = { bytes: 1_000_000, count: 1_000 };
    await store.createUpload(
      {
        id,
        ...owner,
        apiKeyId: "key_1",
        contentType: "image/png",
        bytes: 3,
        fileName: null,
        createdAt: new Date(start),
        expiresAt: new Date(start + expiresInHours * HOUR),
      },
      roomy,
    );
  };
  const record = (id: string) => store.getUpload({ ...owner, id });
  return { dir, blobs, clock, start, upload, record, sweep: new RetentionSweep(deps) };
}

describe("RetentionSweep", () => {
  it("deletes outputs after their retention and uploads at their expiry, keeping newer ones", async () => {
    const { dir, blobs, clock, start, upload, record, sweep } = await setUp({
      fileRetentionHours: 3,
      uploadTtlHours: 1,
    });
    const source = join(dir, "in.mp4");
    await writeFile(source, "video");
    await blobs.put("file_keepmefor3h", source);
    await upload("upload_keepmefor1h", 1);
    expect(await sweep.sweep()).toBe(0);
    clock.at = start + 2 * HOUR;
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("upload_keepmefor1h")).toBeNull();
    expect(await record("upload_keepmefor1h")).toBeNull();
    expect(await blobs.stat("file_keepmefor3h")).not.toBeNull();
    clock.at = start + 4 * HOUR;
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("file_keepmefor3h")).toBeNull();
  });

  it("keeps an upload until the expiry it was given, after the TTL is lowered", async () => {
    // Made under a 48-hour TTL; the operator has since lowered REFVID_UPLOAD_TTL_HOURS to 1.
    const { blobs, clock, start, upload, record, sweep } = await setUp({
      fileRetentionHours: 3,
      uploadTtlHours: 1,
    });
    await upload("upload_madefor48h", 48);
    clock.at = start + 2 * HOUR;
    expect(await sweep.sweep()).toBe(0);
    expect(await blobs.stat("upload_madefor48h")).not.toBeNull();
    expect(await record("upload_madefor48h")).not.toBeNull();
    clock.at = start + 48 * HOUR;
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("upload_madefor48h")).toBeNull();
  });

  it("deletes upload bytes left without a record once no upload could still be using them", async () => {
    const { blobs, clock, start, upload, sweep } = await setUp({ fileRetentionHours: 3, uploadTtlHours: 1 });
    await upload("upload_orphanbytes", null);
    clock.at = start + MAX_UPLOAD_TTL_HOURS * HOUR;
    expect(await sweep.sweep()).toBe(0);
    expect(await blobs.stat("upload_orphanbytes")).not.toBeNull();
    clock.at = start + (MAX_UPLOAD_TTL_HOURS + 2) * HOUR;
    expect(await sweep.sweep()).toBe(1);
    expect(await blobs.stat("upload_orphanbytes")).toBeNull();
  });
});
