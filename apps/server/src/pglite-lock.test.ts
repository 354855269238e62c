import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirectoryLocked, LOCK_FILE, lockDirectory } from "./pglite-lock.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-lock-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lockOf = async () => JSON.parse(await readFile(join(dir, LOCK_FILE), "utf8")) as { pid: number };
const writeLock = (content: string) => writeFile(join(dir, LOCK_FILE), content);

/** A real process that stays alive until killed. */
async function liveProcess() {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e6)"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    pid: child.pid as number,
    async stop() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

describe("lockDirectory", () => {
  it("holds the directory with its pid and removes the lock on release, leaving nothing else", async () => {
    const release = await lockDirectory(dir);
    expect(await lockOf()).toMatchObject({ pid: process.pid, host: hostname() });
    await release();
    expect(await readdir(dir)).toEqual([]);
  });

  it("refuses a second open in the same process", async () => {
    const release = await lockDirectory(dir);
    await expect(lockDirectory(dir)).rejects.toThrow(/already open in this process/);
    await release();
    await (await lockDirectory(dir))();
  });

  it("refuses while another live process holds it, naming the directory and the pid", async () => {
    const holder = await liveProcess();
    try {
      await writeLock(JSON.stringify({ pid: holder.pid, host: hostname(), token: "theirs" }));
      const error = await lockDirectory(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DirectoryLocked);
      expect((error as Error).message).toContain(dir);
      expect((error as Error).message).toContain(`pid ${holder.pid}`);
      expect((await lockOf()).pid).toBe(holder.pid);
    } finally {
      await holder.stop();
    }
    // Once the holder is gone its lock is stale and taken over.
    const release = await lockDirectory(dir);
    expect((await lockOf()).pid).toBe(process.pid);
    await release();
  });

  it.each([
    [
      "a dead pid",
      async () =>
        JSON.stringify({
          pid: await liveProcess().then(async (p) => {
            await p.stop();
            return p.pid;
          }),
          host: hostname(),
          token: "x",
        }),
    ],
    [
      "this process's own pid (a restarted container)",
      async () => JSON.stringify({ pid: process.pid, host: hostname(), token: "x" }),
    ],
    ["unreadable content", async () => "not json"],
  ])("takes over a lock with %s", async (_, content) => {
    await writeLock(await content());
    const release = await lockDirectory(dir);
    expect((await lockOf()).pid).toBe(process.pid);
    await release();
  });

  it("does not take over a lock from another host, and says how to clear it", async () => {
    await writeLock(JSON.stringify({ pid: 1234, host: "another-host", token: "x" }));
    await expect(lockDirectory(dir)).rejects.toThrow(
      new RegExp(`pid 1234 on host another-host .*delete ${join(dir, LOCK_FILE)}`),
    );
  });

  it("lets exactly one of several racing openers win", async () => {
    await writeLock(JSON.stringify({ pid: process.pid, host: hostname(), token: "stale" }));
    const children = Array.from({ length: 4 }, () =>
      spawn(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { lockDirectory } from ${JSON.stringify(new URL("../dist/pglite-lock.js", import.meta.url).href)};
           lockDirectory(${JSON.stringify(dir)}).then(() => { console.log("won"); setTimeout(() => {}, 3000); }, (e) => console.log(e.constructor.name));`,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      ),
    );
    const said = await Promise.all(
      children.map(
        (child) =>
          new Promise<string>((resolve) =>
            child.stdout?.once("data", (c: Buffer) => resolve(c.toString().trim())),
          ),
      ),
    );
    for (const child of children) child.kill("SIGKILL");
    expect(said.filter((s) => s === "won")).toHaveLength(1);
    expect(said.filter((s) => s === "DirectoryLocked")).toHaveLength(3);
  });
});
