/**
 * A real S3-compatible server for tests: OpenStack Swift 2.30 (Debian 12) with its s3api
 * middleware, which checks SigV4 signatures (headers and presigned URLs), does path-style
 * addressing, ranges and multipart uploads. Each call starts a private instance -- account,
 * container, object and proxy servers as child processes -- with every file under one dir.
 *
 *   const s3 = await startS3Server();
 *   new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true,
 *     credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
 *   await s3.stop();
 *
 * Installs Swift first when missing (install.sh, as root). Anything that fails to start throws
 * with the end of that server's log: a test that needs S3 fails loudly, it never skips.
 */
import { spawn } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { signedHeaders } from "./sign.mjs";
import { swiftConfigs } from "./swift-config.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const LAUNCHER = join(HERE, "swift_launcher.py");
// Debian's interpreter, where python3-swift lives; `python3` on PATH may be a pyenv one.
const PYTHON = "/usr/bin/python3";
const SWIFT_MARKER = "/usr/lib/python3/dist-packages/swift/common/middleware/s3api/s3api.py";
const SERVERS = ["account", "container", "object", "proxy"];
const REGION = "us-east-1";

// Children of every instance, killed synchronously if this process exits without stop().
// (If it is SIGKILLed, the kernel stops them instead: see PR_SET_PDEATHSIG in swift_launcher.py.)
const live = new Set();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

async function ensureInstalled() {
  if (existsSync(PYTHON) && existsSync(SWIFT_MARKER)) return;
  await new Promise((resolve, reject) => {
    const child = spawn("bash", [join(HERE, "install.sh")], { stdio: ["ignore", "inherit", "inherit"] });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${join(HERE, "install.sh")} failed (exit ${code})`)),
    );
  });
}

// Ports handed out for listen(0) and for outgoing connections come from the kernel's ephemeral
// range. Swift's servers bind their ports a moment after we choose them, so choosing from that
// range races every other test that listens or connects meanwhile: choose below it.
function ephemeralLow() {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    return Number(low) || 32768;
  } catch {
    return 32768;
  }
}

const canListen = (port) =>
  new Promise((resolve) => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

/** `count` distinct ports, free now, from below the ephemeral range (randomly, so concurrent starts rarely meet). */
async function freePorts(count) {
  const low = 20_000;
  const high = Math.max(low + 1_000, ephemeralLow());
  const ports = new Set();
  for (let tries = 0; ports.size < count; tries++) {
    if (tries > 1_000) throw new Error(`no free port in ${low}-${high - 1}`);
    const port = low + randomInt(high - low);
    if (!ports.has(port) && (await canListen(port))) ports.add(port);
  }
  return [...ports];
}

/** ListBuckets, signed: ready means the proxy, s3api, tempauth and the account server all work. */
function signedListBuckets(endpoint, credentials) {
  return fetch(`${endpoint}/`, {
    headers: signedHeaders({ endpoint, region: REGION, ...credentials }),
    signal: AbortSignal.timeout(5_000),
  });
}

// No pid: the spawn itself failed (its 'error' event), and no 'exit' may follow.
const exited = (child) => child.pid === undefined || child.exitCode !== null || child.signalCode !== null;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function logTail(file, chars = 3_000) {
  const text = await readFile(file, "utf8").catch(() => "(no log)");
  return text.slice(-chars);
}

/**
 * @param {{ dir?: string, port?: number, timeoutMs?: number }} [options]
 *   dir: where to put everything (created; kept by stop()); default: a fresh temp dir, removed by stop().
 *   port: the proxy's (S3 endpoint's) port; default: a free one.
 */
export async function startS3Server(options = {}) {
  // A port chosen free can still be taken before Swift binds it: start again on new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      if (attempt >= 3 || !String(err?.message).includes("Could not bind")) throw err;
    }
  }
}

async function startOnce({ dir, port, credentials: given, timeoutMs = 60_000 } = {}) {
  await ensureInstalled();
  const ownDir = !dir;
  dir = dir ?? (await mkdtemp(join(tmpdir(), "refvid-s3-")));
  const [account, container, object, free] = await freePorts(port ? 3 : 4);
  const ports = { account, container, object, proxy: port ?? free };
  // tempauth's S3 access key id is "<swift account>:<user>". The account stays "refvid" so a
  // reused dir keeps its buckets; user and secret are new each start.
  const credentials = given ?? {
    accessKeyId: `refvid:u${randomBytes(6).toString("hex")}`,
    secretAccessKey: randomBytes(24).toString("hex"),
  };
  if (!/^refvid:[A-Za-z0-9_-]+$/.test(credentials.accessKeyId))
    throw new Error(`the access key id must be refvid:<user> (tempauth's account:user), not ${credentials.accessKeyId}`);
  const [tempauthAccount, tempauthUser] = credentials.accessKeyId.split(":");
  const etc = join(dir, "etc");
  for (const sub of ["etc", "srv/d1", "cache", "log", "run"])
    await mkdir(join(dir, sub), { recursive: true });
  const configs = swiftConfigs({
    dir,
    ports,
    runAs: userInfo().username,
    account: tempauthAccount,
    user: tempauthUser,
    secret: credentials.secretAccessKey,
    region: REGION,
  });
  for (const [name, text] of Object.entries(configs)) await writeFile(join(etc, name), text);

  // -E -s: ignore PYTHONPATH & co. and user site-packages, which could shadow Debian's modules.
  // -B: the proxy imports swift_launcher.py as a module; keep __pycache__ out of the repo.
  const python = (args) => [PYTHON, ["-B", "-E", "-s", LAUNCHER, ...args]];
  const children = new Map();
  let stopped;
  const stop = () => {
    stopped ??= (async () => {
      await Promise.all(
        [...children.values()].map(async (child) => {
          if (!exited(child)) {
            const done = new Promise((resolve) => child.once("exit", resolve));
            child.kill("SIGTERM");
            const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
            await done;
            clearTimeout(timer);
          }
          live.delete(child);
        }),
      );
      if (ownDir) await rm(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const logFile = (name) => join(dir, "log", `${name}.log`);
  const launch = async (name, ...extra) => {
    const fd = openSync(logFile(name), "a");
    const child = spawn(
      ...python(["serve", etc, join(etc, `${name}-server.conf`), `${name}-server`, ...extra]),
      {
        stdio: ["ignore", fd, fd],
        env: { ...process.env, SWIFT_LAUNCHER_PARENT_PID: String(process.pid) },
      },
    );
    closeSync(fd);
    child.on("error", () => {}); // a failed spawn shows as exited() below
    children.set(name, child);
    live.add(child);
    if (child.pid) await writeFile(join(dir, "run", `${name}.pid`), `${child.pid}\n`);
  };
  for (const name of ["account", "container", "object"]) await launch(name);
  // The proxy builds the rings (and checks xattr support) before it serves: see swift_launcher.py.
  await launch("proxy", join(dir, "srv"), account, container, object);

  const endpoint = `http://127.0.0.1:${ports.proxy}`;
  const deadline = Date.now() + timeoutMs;
  const fail = async (why, names) => {
    const tails = await Promise.all(
      names.map(async (n) => `--- ${n}-server (${logFile(n)}) ---\n${await logTail(logFile(n))}`),
    );
    await stop();
    return new Error(`S3 test server did not start: ${why}\n${tails.join("\n")}`);
  };
  const ready = new Set();
  for (;;) {
    for (const [name, child] of children) {
      if (exited(child))
        throw await fail(`${name}-server exited (${child.exitCode ?? child.signalCode ?? "no spawn"})`, [
          name,
        ]);
    }
    for (const name of ["account", "container", "object"]) {
      if (ready.has(name)) continue;
      const res = await fetch(`http://127.0.0.1:${ports[name]}/healthcheck`, {
        signal: AbortSignal.timeout(2_000),
      }).catch(() => null);
      if (res?.ok) ready.add(name);
    }
    let last = "no answer";
    if (ready.size === 3) {
      const res = await signedListBuckets(endpoint, credentials).catch((err) => ({ ok: false, err }));
      if (res.ok) break;
      last = res.err
        ? String(res.err.cause ?? res.err)
        : `HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`;
    }
    if (Date.now() > deadline) {
      const waiting = SERVERS.filter((n) => !ready.has(n));
      throw await fail(`not ready after ${timeoutMs} ms (S3 ListBuckets: ${last})`, waiting);
    }
    await sleep(100);
  }
  return { endpoint, region: REGION, ...credentials, dir, stop };
}
