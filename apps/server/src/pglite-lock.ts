/**
 * One process per embedded (PGlite) store directory: two processes writing one directory corrupt
 * it. The holder keeps `<dir>/refvid.lock` naming its pid and host; a start that finds the lock
 * held by a live process refuses, naming the directory and the pid. A lock left by a process that
 * is gone (killed, crashed) is taken over, as PostgreSQL does with postmaster.pid: the lock's pid
 * is not running, or is this process or its parent (a container restarted with the same pids).
 * A lock from another host (a container sharing the volume) cannot be checked and is not taken
 * over. Why not a lock library: docs/decisions.md, "One process per PGlite directory".
 */
import { randomBytes } from "node:crypto";
import { link, readFile, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { StartupError } from "./startup-checks.js";

export const LOCK_FILE = "refvid.lock";

interface LockContent {
  pid: number;
  host: string;
  token: string;
  started_at: string;
}

/** The directory is in use by another process. */
export class DirectoryLocked extends StartupError {}

/** Lock files this process holds: a second open of one directory in one process is refused too. */
const held = new Set<string>();

/** Takes the directory's lock; the returned function releases it. */
export async function lockDirectory(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  if (held.has(path))
    throw new DirectoryLocked(`${dir} is already open in this process (pid ${process.pid})`);
  const mine: LockContent = {
    pid: process.pid,
    host: hostname(),
    token: randomBytes(8).toString("hex"),
    started_at: new Date().toISOString(),
  };
  // Written aside and linked into place, so the lock file never exists half-written.
  const draft = `${path}.${mine.token}`;
  await writeFile(draft, `${JSON.stringify(mine)}\n`, { mode: 0o644 });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        await link(draft, path);
        held.add(path);
        return async () => {
          held.delete(path);
          await release(path, mine.token);
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const holder = await readLock(path);
      if (holder === "gone") continue;
      if (holder && holder.host !== mine.host) {
        throw new DirectoryLocked(
          `${dir} is in use by pid ${holder.pid} on host ${holder.host} (${path}); one embedded store ` +
            `serves one process. If no refvid runs there any more, delete ${path}.`,
        );
      }
      if (holder && isAlive(holder.pid)) {
        throw new DirectoryLocked(
          `${dir} is in use by another refvid process (pid ${holder.pid}); one embedded store serves one ` +
            "process. Stop it first, or point DATABASE_URL at a Postgres server to run several processes.",
        );
      }
      await removeStale(path, holder?.token ?? null, draft);
    }
    throw new DirectoryLocked(`could not take the lock ${path}: other processes keep taking it`);
  } finally {
    await unlink(draft).catch(() => {});
  }
}

/** The lock's content; null when it is unreadable (not written by refvid), "gone" when it vanished. */
async function readLock(path: string): Promise<LockContent | null | "gone"> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw err;
  }
  try {
    const content = JSON.parse(text) as LockContent;
    return Number.isSafeInteger(content.pid) && typeof content.host === "string" ? content : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid || pid === process.ppid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM"; // it exists, under another user
  }
}

/**
 * Removes a stale lock, under a takeover guard (`<lock>.takeover`, linked into place like the lock
 * itself) so that only one process at a time removes: the guard's holder checks that the lock is
 * still the one judged stale before deleting it, and nobody else deletes the lock, so a lock taken
 * meanwhile by another process is never removed. Without the guard, two processes racing to remove
 * one stale lock could delete a third's fresh one and both win. A guard whose holder died is
 * removed like a stale lock.
 */
async function removeStale(path: string, staleToken: string | null, draft: string): Promise<void> {
  const guard = `${path}.takeover`;
  try {
    await link(draft, guard);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const holder = await readLock(guard);
    if (holder !== "gone" && holder && !isAlive(holder.pid) && holder.host === hostname()) {
      await unlink(guard).catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    return; // another process is taking over; look again
  }
  try {
    const current = await readLock(path);
    if (current !== "gone" && (current?.token ?? null) === staleToken) await unlink(path).catch(() => {});
  } finally {
    await unlink(guard).catch(() => {});
  }
}

async function release(path: string, token: string): Promise<void> {
  const current = await readLock(path);
  if (current && current !== "gone" && current.token === token) await unlink(path).catch(() => {});
}
