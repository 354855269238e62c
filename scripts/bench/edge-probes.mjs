// The red team's slow-connection attack (issue 26, finding 2), measured: the share of /healthz
// probes answered while 1,000 uploads with a valid key trickle a byte every 5 s and 1,100
// connections without a key never finish their headers, all from 127.0.0.1. Each attacking
// connection the server closes is opened again a second later, so the attack holds for the whole
// measurement. Probes come from another address (127.0.0.2, as a kubelet's would), one after
// another, each on a connection of its own, with a 3 s timeout.
//
//   node scripts/bench/edge-probes.mjs                       # the server's defaults, probes on PORT
//   BENCH_EDGE_PROBE_PORT=1 node scripts/bench/edge-probes.mjs     # and probes on REFVID_PROBE_PORT
//   BENCH_EDGE_ENV='{"REFVID_MAX_CONNECTIONS_PER_ADDRESS":"0"}' …  # settings of the server under test
//   BENCH_EDGE_MAIN=/path/to/dist/main.js …                        # another build (the code before a change)
//
// Needs the server built (`npx turbo run build --filter=@refvid/server...`). Loopback only,
// bounded in count and time; prints one JSON line.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const MAIN =
  process.env.BENCH_EDGE_MAIN ?? fileURLToPath(new URL("../../apps/server/dist/main.js", import.meta.url));
const UPLOADS = Number(process.env.BENCH_EDGE_UPLOADS ?? 1000);
const SLOW_HEADERS = Number(process.env.BENCH_EDGE_SLOW_HEADERS ?? 1100);
const HOLD_MS = Number(process.env.BENCH_EDGE_HOLD_MS ?? 60_000);
const PROBE_TIMEOUT_MS = 3_000;

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function probe(port) {
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        localAddress: "127.0.0.2",
        port,
        path: "/healthz",
        agent: false,
        timeout: PROBE_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode === 200));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

async function admin(url, token, path, body) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const port = await freePort();
const probePort = process.env.BENCH_EDGE_PROBE_PORT ? await freePort() : null;
const dataDir = await mkdtemp(join(tmpdir(), "refvid-edge-"));
const adminToken = randomBytes(24).toString("hex");
const child = spawn(process.execPath, [MAIN, "--role", "api"], {
  env: {
    PATH: process.env.PATH ?? "",
    HOST: "127.0.0.1",
    PORT: String(port),
    REFVID_STORE: "memory",
    REFVID_DATA_DIR: dataDir,
    REFVID_ADMIN_TOKEN: adminToken,
    REFVID_SEED_DEMO: "false",
    LOG_LEVEL: "warn",
    ...(probePort ? { REFVID_PROBE_PORT: String(probePort) } : {}),
    ...JSON.parse(process.env.BENCH_EDGE_ENV ?? "{}"),
  },
  stdio: ["ignore", "ignore", "inherit"],
});
process.on("exit", () => child.kill("SIGKILL")); // never left behind, whatever happens here
const url = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  if (
    await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  if (i > 600) throw new Error("the server did not start");
  await wait(100);
}
const org = await admin(url, adminToken, "/admin/v1/organizations", { name: "edge" });
const { key } = await admin(url, adminToken, `/admin/v1/organizations/${org.organization_id}/api-keys`, {
  rate_limit_per_minute: 100_000,
});

let stopping = false;
const sockets = new Set();
let reopened = 0;
/** Keeps one attacking connection open: `first` on connect, then a byte every 5 s; again when closed. */
function hold(first) {
  if (stopping) return;
  const socket = connect(port, "127.0.0.1", () => socket.write(first));
  sockets.add(socket);
  socket.on("error", () => {});
  socket.resume();
  const drip = setInterval(() => socket.writable && socket.write("x"), 5_000);
  socket.once("close", () => {
    clearInterval(drip);
    sockets.delete(socket);
    if (stopping) return;
    reopened++;
    setTimeout(() => hold(first), 1_000);
  });
}
const upload =
  `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Key ${key}\r\n` +
  "Content-Type: image/png\r\nContent-Length: 1048576\r\n\r\n\x89PNG";
const slowHeaders = "GET /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
for (let i = 0; i < UPLOADS; i++) hold(upload);
for (let i = 0; i < SLOW_HEADERS; i++) hold(slowHeaders);
await wait(2_000); // the attack in place

const results = { main: [0, 0], probe: [0, 0] };
const until = Date.now() + HOLD_MS;
while (Date.now() < until) {
  const main = await probe(port);
  results.main[0] += main ? 1 : 0;
  results.main[1]++;
  if (probePort) {
    const own = await probe(probePort);
    results.probe[0] += own ? 1 : 0;
    results.probe[1]++;
  }
  await wait(100);
}
stopping = true;
for (const socket of sockets) socket.destroy();
child.kill("SIGTERM");
await new Promise((resolve) => child.once("exit", resolve));
await rm(dataDir, { recursive: true, force: true });
const share = ([ok, all]) => `${ok} of ${all} (${all ? ((100 * ok) / all).toFixed(1) : "-"} %)`;
process.stdout.write(
  `${JSON.stringify({
    uploads: UPLOADS,
    slowHeaders: SLOW_HEADERS,
    holdSeconds: HOLD_MS / 1000,
    env: JSON.parse(process.env.BENCH_EDGE_ENV ?? "{}"),
    healthzOnPort: share(results.main),
    ...(probePort ? { healthzOnProbePort: share(results.probe) } : {}),
    attackingConnectionsClosedAndReopened: reopened,
  })}\n`,
);
process.exit(0);
