/**
 * BlobStore on a local directory: one file per blob, named by its id (videos keep the `.mp4`
 * name they always had), with a small `.type` file beside a blob whose content type is not the
 * default. Right for one machine, or a directory every process shares.
 */

import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import {
  copyFile,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Clock, systemClock } from "../clock.js";
import { naming } from "../storage-full.js";
import {
  type BlobInfo,
  type BlobKind,
  type BlobStore,
  type ByteRange,
  blobKind,
  checkedBlobId,
  DEFAULT_CONTENT_TYPE,
} from "./blob-store.js";

/** How long a partial file may go unwritten before the sweep takes it for a dead process's. */
const PARTIAL_IDLE_MS = 60 * 60_000;

export class LocalBlobStore implements BlobStore {
  /** `clock` stamps stored blobs (retention goes by it); the system clock by default. */
  constructor(
    private readonly dir: string,
    private readonly clock: Clock = systemClock,
  ) {}

  private path(id: string): string {
    return join(this.dir, blobKind(checkedBlobId(id)) === "file" ? `${id}.mp4` : id);
  }

  private typePath(id: string): string {
    return `${this.path(id)}.type`;
  }

  async put(id: string, source: string | Readable, options: { contentType?: string } = {}) {
    const target = this.path(id);
    await mkdir(this.dir, { recursive: true });
    // Written aside and renamed into place, so a put that fails (a cut-off stream, a full disk)
    // never leaves a partial blob: the partial file is removed, and so is anything written after.
    const partial = `${target}.partial-${randomBytes(4).toString("hex")}`;
    const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
    try {
      if (typeof source === "string") {
        try {
          await rename(source, target);
        } catch {
          // Another filesystem: copy instead of moving.
          await copyFile(source, partial);
          await rename(partial, target);
          await rm(source, { force: true });
        }
      } else {
        await pipeline(source, createWriteStream(partial));
        await rename(partial, target);
      }
      if (contentType !== DEFAULT_CONTENT_TYPE) await writeFile(this.typePath(id), contentType);
      // The modification time is when the blob was stored: the retention sweep goes by it.
      const now = this.clock.now();
      await utimes(target, now, now);
      return { size: (await stat(target)).size, contentType };
    } catch (err) {
      await rm(partial, { force: true });
      await this.delete(id);
      throw naming(err, partial);
    }
  }

  async stat(id: string): Promise<BlobInfo | null> {
    if (!blobKind(id)) return null;
    const info = await stat(this.path(id)).catch(() => null);
    if (!info) return null;
    const contentType = await readFile(this.typePath(id), "utf8").catch(() => DEFAULT_CONTENT_TYPE);
    return { size: info.size, contentType };
  }

  async read(id: string, range?: ByteRange): Promise<Readable> {
    // Opened here, so an unknown id rejects now, not later in the stream; the stream closes it.
    const handle = await open(this.path(id));
    return handle.createReadStream({ ...range });
  }

  async delete(id: string) {
    await rm(this.path(id), { force: true });
    await rm(this.typePath(id), { force: true });
  }

  async deleteOlderThan(kind: BlobKind, before: Date) {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    let deleted = 0;
    for (const name of names) {
      const partial = /^(.+?)(?:\.mp4)?\.partial-[0-9a-f]+$/.exec(name);
      if (partial) {
        // Left by a process that died while receiving a stream: a stream still arriving writes to
        // its file far more often than this, so one idle this long is nobody's, whatever the
        // kind's retention.
        const info = await stat(join(this.dir, name)).catch(() => null);
        // A partial's time is the file system's, written as its bytes arrive: judged on that clock.
        const idle = info && info.mtime.getTime() < Date.now() - PARTIAL_IDLE_MS;
        if (info && (idle || info.mtime < before) && blobKind(partial[1] ?? "") === kind)
          await rm(join(this.dir, name), { force: true });
        continue;
      }
      const id = name.endsWith(".mp4") ? name.slice(0, -4) : name;
      if (blobKind(id) !== kind || this.path(id) !== join(this.dir, name)) continue;
      const info = await stat(join(this.dir, name)).catch(() => null);
      if (info && info.mtime < before) {
        await this.delete(id);
        deleted++;
      }
    }
    return deleted;
  }
}
