/**
 * The BlobStore port and its local-directory adapter: where generated videos are kept until
 * their URLs are fetched.
 */
import { createReadStream, type ReadStream } from "node:fs";
import { copyFile, mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";

export interface BlobStore {
  /** Moves (or copies) a finished file into the store under `fileId`. */
  put(fileId: string, sourcePath: string): Promise<{ size: number }>;
  stat(fileId: string): Promise<{ size: number } | null>;
  read(fileId: string, range?: { start: number; end: number }): ReadStream;
  delete(fileId: string): Promise<void>;
  /** Deletes files stored before `before`; returns how many. */
  deleteOlderThan(before: Date): Promise<number>;
}

const SAFE_ID = /^file_[A-Za-z0-9_-]{8,100}$/;

/** Files under one directory, named by id. Ids are checked, so a path can never escape it. */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly dir: string) {}

  private path(fileId: string): string {
    if (!SAFE_ID.test(fileId)) throw new RangeError(`invalid file id: ${fileId}`);
    return join(this.dir, `${fileId}.mp4`);
  }

  async put(fileId: string, sourcePath: string) {
    await mkdir(this.dir, { recursive: true });
    const target = this.path(fileId);
    try {
      await rename(sourcePath, target);
    } catch {
      // Another filesystem: copy instead of moving.
      await copyFile(sourcePath, target);
      await rm(sourcePath, { force: true });
    }
    // The modification time is when the file was stored: the retention sweep goes by it.
    const now = new Date();
    await utimes(target, now, now);
    return { size: (await stat(target)).size };
  }

  async stat(fileId: string) {
    if (!SAFE_ID.test(fileId)) return null;
    try {
      return { size: (await stat(this.path(fileId))).size };
    } catch {
      return null;
    }
  }

  read(fileId: string, range?: { start: number; end: number }) {
    return createReadStream(this.path(fileId), range);
  }

  async delete(fileId: string) {
    await rm(this.path(fileId), { force: true });
  }

  async deleteOlderThan(before: Date) {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    let deleted = 0;
    for (const name of names) {
      if (!name.startsWith("file_") || !name.endsWith(".mp4")) continue;
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => null);
      if (info && info.mtime < before) {
        await rm(path, { force: true });
        deleted++;
      }
    }
    return deleted;
  }
}
