/**
 * The health probes while the API's connection cap is full (docs/decisions.md, "Requests at the
 * edge"): a real refvid process (the built `dist/main.js`) holds slightly more slow connections
 * than REFVID_MAX_CONNECTIONS, half of them uploads with a valid key trickling a byte a second,
 * half requests whose headers never end. Probes on the API's port are refused, as any connection
 * over the cap is; every probe on REFVID_PROBE_PORT is answered. The per-address and per-key
 * limits and the body rate are off here, as they would be no help against an attacker with many
 * addresses and keys and bandwidth enough: the probe port must hold without them. The store plays
 * no part, so this file runs once, in the plain (memory) pass.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitCode, holdSync, tenant } from "./held-requests.js";
import { type Fleet, fleet, freePort, type RefvidProcess } from "./processes.js";

const CAP = 200;
/** Of each kind: slow uploads, and slow headers. Together slightly more than the cap. */
const SLOW = 110;
const PROBES = 40;
/** How long a probe waits for its answer, as a prober would (Docker's and Kubernetes' are 1 to 3 s). */
const PROBE_TIMEOUT_MS = 3_000;
const METRICS_TOKEN = "probe-port-metrics-token";

let processes: Fleet;

beforeAll(async () => {
  processes = await fleet({ REFVID_STORE: "memory", LOG_LEVEL: "warn" });
}, 60_000);
afterAll(async () => {
  await processes?.stopAll();
}, 60_000);

/** One probe on a connection of its own (as a kubelet makes it): its status, or 0 when refused or reset. */
function probe(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path, agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

/** Probes `path` on `port` one after another; how many were answered 200. */
async function answered(port: number, path: string): Promise<number> {
  let ok = 0;
  for (let i = 0; i < PROBES; i++) if ((await probe(port, path)) === 200) ok++;
  return ok;
}

describe.skipIf(Boolean(process.env.DATABASE_URL))("REFVID_PROBE_PORT", () => {
  let server: RefvidProcess;
  let probePort: number;

  beforeAll(async () => {
    probePort = await freePort();
    server = await processes.start("api", {
      REFVID_MAX_CONNECTIONS: String(CAP),
      REFVID_PROBE_PORT: String(probePort),
      REFVID_MAX_CONNECTIONS_PER_ADDRESS: "0",
      REFVID_MAX_REQUESTS_PER_KEY: "0",
      REFVID_MIN_BODY_BYTES_PER_S: "0",
      REFVID_METRICS_TOKEN: METRICS_TOKEN,
      // Nothing is cut off while the probes are measured.
      REFVID_HEADERS_TIMEOUT_MS: "120000",
      REFVID_REQUEST_TIMEOUT_MS: "120000",
    });
  }, 60_000);

  it(`answers every probe while ${2 * SLOW} slow connections hold the API's ${CAP}`, async ({ annotate }) => {
    const apiKey = await tenant(server, processes.adminToken);
    expect(await answered(probePort, "/healthz")).toBe(PROBES); // the port serves before the load too

    const sockets: Socket[] = [];
    // Connections over the cap are closed as they arrive; once they are, the cap is full.
    const over = 2 * SLOW - CAP;
    let closedByServer = 0;
    let capFull: () => void = () => {};
    const full = new Promise<void>((resolve) => {
      capFull = resolve;
    });
    const open = (first: string) =>
      new Promise<Socket>((resolve) => {
        const socket = connect(server.port, "127.0.0.1", () => {
          socket.write(first);
          resolve(socket);
        });
        socket.on("error", () => {});
        socket.once("close", () => {
          if (++closedByServer === over) capFull();
        });
        sockets.push(socket);
      });
    for (let i = 0; i < SLOW; i++) {
      await open(
        `POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Key ${apiKey}\r\n` +
          "Content-Type: image/png\r\nContent-Length: 1048576\r\n\r\n\x89PNG",
      );
      await open("GET /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    }
    // A byte a second on each: the uploads' bodies and the other requests' endless header.
    const drip = setInterval(() => {
      for (const socket of sockets) if (!socket.destroyed) socket.write("x");
    }, 1_000);
    try {
      await full;
      const main = await answered(server.port, "/healthz");
      const probes = await answered(probePort, "/healthz");
      const ready = await answered(probePort, "/readyz");
      const held = sockets.filter((s) => !s.destroyed).length;
      const summary =
        `${held} slow connections held (cap ${CAP}): /healthz on PORT answered ${main} of ${PROBES}; ` +
        `on REFVID_PROBE_PORT /healthz ${probes} of ${PROBES}, /readyz ${ready} of ${PROBES}`;
      await annotate(summary);
      // The cap, less the few connections this test's own fetches keep alive.
      expect(held, summary).toBeGreaterThanOrEqual(CAP - 5);
      // The load is real: the API's port refuses most probes.
      expect(main, summary).toBeLessThan(PROBES / 2);
      expect(probes, summary).toBe(PROBES);
      expect(ready, summary).toBe(PROBES);
    } finally {
      clearInterval(drip);
      for (const socket of sockets) socket.destroy();
    }
  }, 90_000);

  it("serves /metrics there under the metrics token rule, and nothing of the API", async () => {
    const metrics = `http://127.0.0.1:${probePort}/metrics`;
    expect((await fetch(metrics)).status).toBe(401);
    const res = await fetch(metrics, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# HELP /m);
    const api = await fetch(`http://127.0.0.1:${probePort}/v1/account`);
    expect(api.status).toBe(404);
    expect(((await api.json()) as any).error.message).toMatch(/REFVID_PROBE_PORT/);
  });

  it("keeps answering through a stop: /healthz 200 and /readyz 503 while the API's port is closed", async () => {
    const ownProbePort = await freePort();
    // No worker: the held submit's run stays queued, so the drain lasts until its deadline.
    const p = await processes.start("api", {
      REFVID_PROBE_PORT: String(ownProbePort),
      REFVID_DRAIN_MS: "3000",
    });
    const held = await holdSync(p.url, await tenant(p, processes.adminToken), "never started");
    expect(held.status).toBe(201);
    p.child.kill("SIGTERM");
    const probeUrl = `http://127.0.0.1:${ownProbePort}`;
    // Once the API's port refuses connections, the stop has begun.
    for (;;) {
      const refused = await fetch(`${p.url}/healthz`).then(
        () => false,
        () => true,
      );
      if (refused) break;
    }
    expect(await probe(ownProbePort, "/healthz")).toBe(200);
    expect(await probe(ownProbePort, "/readyz")).toBe(503);
    expect(((await (await fetch(`${probeUrl}/readyz`)).json()) as any).status).toBe("unavailable");
    expect((await held.body).ok).toBe(true);
    expect(await exitCode(p)).toBe(0);
  }, 60_000);
});
