/**
 * The Docker engine of the deploy tests (`npm run test:deploy` starts it and sets DOCKER_HOST),
 * and containers on it. Every container uses the host's network: all traffic stays on loopback.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The image under test: scripts/deploy/test.sh builds it from the repository's Dockerfile. */
export function imageUnderTest(): string {
  const image = process.env.REFVID_DEPLOY_IMAGE;
  if (!image || !process.env.DOCKER_HOST)
    throw new Error(
      "the deploy tests need a Docker engine and the image: run them with `npm run test:deploy`",
    );
  return image;
}

/** `docker <args>`; its standard output, trimmed. Throws with standard error on failure. */
export async function docker(...args: string[]): Promise<string> {
  try {
    const { stdout } = await run("docker", args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`docker ${args.join(" ")}: ${e.stderr || e.stdout || e.message}`);
  }
}

/** Containers started by one test file; `removeAll` removes them, whatever their state. */
export function containers() {
  const tag = randomBytes(3).toString("hex");
  const started: string[] = [];
  return {
    /** Starts a detached, read-only container on the host's network; its name. */
    async start(name: string, image: string, env: Record<string, string>, args: string[] = []) {
      const full = `refvid-test-${tag}-${name}`;
      const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
      started.push(full);
      await docker(
        "run",
        "-d",
        "--name",
        full,
        "--network",
        "host",
        "--read-only",
        ...envArgs,
        image,
        ...args,
      );
      return full;
    },
    async logs(name: string): Promise<string> {
      const { stdout, stderr } = await run("docker", ["logs", "--tail", "60", name]).catch((err) => err);
      return `${stdout ?? ""}${stderr ?? ""}`;
    },
    async removeAll() {
      if (started.length > 0) await docker("rm", "-f", "-v", ...started).catch(() => "");
    },
  };
}
