/**
 * Slow and greedy clients against a real refvid process (the built `dist/main.js`), so memory is
 * the server's alone: hundreds of unauthenticated connections trickling 1 MB bodies leave its
 * RSS bounded and /healthz fast, slow headers and slow bodies are cut off at their timeouts, and
 * connections past REFVID_MAX_CONNECTIONS are refused. The store plays no part, so this file runs
 * once, in the plain (memory) pass.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Fleet, fleet, type RefvidProcess } from "./processes.js";

const CLIENTS = 500;
const BODY_BYTES = 1_048_576;
/** RSS the server may add while the clients hold their connections. */
const RSS_GROWTH_BOUND_MB = 100;
/** How long the clients hold on while memory and the probe are measured. */
const HOLD_MS = 2_000;
const REQUEST_TIMEOUT_MS = 3_000;
const HEADERS_TIMEOUT_MS = 1_000;

let processes: Fleet;

beforeAll(async () => {
  processes = await fleet({ REFVID_STORE: "memory", LOG_LEVEL: "warn" });
}, 60_000);
afterAll(async () => {
  await processes?.stopAll();
}, 60_000);

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

async function healthzMs(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/healthz`);
  await res.text();
  expect(res.status).toBe(200);
  return performance.now() - started;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** Resolves when the server has closed `socket` (or it errored), with the time it took from `since`. */
function closedAfter(socket: Socket, since: number): Promise<number> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(performance.now() - since);
    socket.once("close", () => resolve(performance.now() - since));
  });
}

describe.skipIf(Boolean(process.env.DATABASE_URL))("slow and greedy clients", () => {
  let server: RefvidProcess;

  beforeAll(async () => {
    server = await processes.start("api", {
      REFVID_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      REFVID_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      // The clients stand for many, though they all come from 127.0.0.1.
      REFVID_MAX_CONNECTIONS_PER_ADDRESS: "0",
    });
  }, 60_000);

  it(`${CLIENTS} unauthenticated clients trickling 1 MB bodies: RSS stays bounded, /healthz stays fast, and each is cut off by the request timeout`, async ({
    annotate,
  }) => {
    const pid = server.child.pid as number;
    for (let i = 0; i < 20; i++) await healthzMs(server.url); // warm up
    const baseline = rssMb(pid);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const sockets: Socket[] = [];
    const closed: Promise<number>[] = [];
    const sent: Promise<void>[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const openedAt = performance.now();
      const socket = await open(server.port);
      socket.on("error", () => {}); // the server may cut it off mid-write
      socket.resume(); // read (and drop) the answer, so the server's close is seen
      sockets.push(socket);
      // Timed from its own connection: on a loaded machine, opening 500 clients takes a while.
      closed.push(closedAfter(socket, openedAt));
      socket.write(
        `POST /v1/run/lab-a/model-a/reference-to-video HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${BODY_BYTES}\r\n\r\n{"input": `,
      );
      // All but the last byte, as fast as the server takes it; then the client holds on.
      sent.push(
        (async () => {
          const drained = () =>
            new Promise<void>((resolve) => {
              socket.once("drain", resolve);
              socket.once("close", resolve);
            });
          for (let at = 10; at < BODY_BYTES - chunk.length; at += chunk.length) {
            if (socket.destroyed) return;
            if (!socket.write(chunk)) await drained();
          }
          if (!socket.destroyed && socket.writableLength > 0) await drained();
        })(),
      );
    }
    await Promise.all(sent);

    // While the clients hold their connections: memory and the probe, back to back.
    let peak = rssMb(pid);
    const probes: number[] = [];
    const holdUntil = performance.now() + HOLD_MS;
    while (performance.now() < holdUntil || probes.length < 10) {
      probes.push(await healthzMs(server.url));
      peak = Math.max(peak, rssMb(pid));
    }
    // The server hangs up on every one of them: within the request timeout and its 1 s check on an
    // idle machine (the summary says how long it took); the deadline leaves room for a machine busy
    // with other suites, where the server closes 500 sockets slowly.
    const deadline = REQUEST_TIMEOUT_MS + 20_000;
    const giveUp = new Promise<number>((resolve) =>
      setTimeout(() => resolve(Number.POSITIVE_INFINITY), deadline),
    );
    const waits = await Promise.all(closed.map((c) => Promise.race([c, giveUp])));
    const inTime = waits.filter((ms) => ms < deadline).length;
    const summary =
      `RSS ${baseline.toFixed(0)} MB -> peak ${peak.toFixed(0)} MB (+${(peak - baseline).toFixed(0)} MB) with ${CLIENTS} clients; ` +
      `/healthz max ${Math.max(...probes).toFixed(1)} ms; ${inTime} of ${CLIENTS} connections closed by the server within ${deadline} ms`;
    await annotate(summary);
    expect(peak - baseline, summary).toBeLessThan(RSS_GROWTH_BOUND_MB);
    expect(Math.max(...probes), summary).toBeLessThan(500);
    expect(inTime, summary).toBe(CLIENTS);
    for (const socket of sockets) socket.destroy();
  }, 90_000);

  it("slow headers are cut off at the headers timeout with a 408", async () => {
    const socket = await open(server.port);
    let received = "";
    socket.on("data", (c) => {
      received += c;
    });
    socket.on("error", () => {});
    const started = performance.now();
    const closed = closedAfter(socket, started);
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    // One header byte every 100 ms: never a complete head.
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write("X");
    }, 100);
    const after = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 8_000))]);
    clearInterval(drip);
    socket.destroy();
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('"code":408');
  }, 15_000);
});

describe.skipIf(Boolean(process.env.DATABASE_URL))("REFVID_MAX_CONNECTIONS", () => {
  it("refuses connections past the cap at once and serves again when some close", async () => {
    const server = await processes.start("api", { REFVID_MAX_CONNECTIONS: "20" });
    const held: Socket[] = [];
    const ask = (socket: Socket) =>
      new Promise<string>((resolve) => {
        let text = "";
        const onData = (c: Buffer) => {
          text += c;
          if (text.includes('{"status":"ok"}')) {
            socket.off("data", onData);
            resolve(text);
          }
        };
        socket.on("data", onData);
        socket.once("close", () => resolve(text));
        socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      });
    // Answered keep-alive connections until the server refuses one: it has taken each before.
    let refused = false;
    for (let i = 0; i < 25 && !refused; i++) {
      const socket = await open(server.port);
      socket.on("error", () => {});
      const answer = await ask(socket);
      if (answer.startsWith("HTTP/1.1 200")) held.push(socket);
      else {
        expect(answer).toBe("");
        refused = true;
      }
    }
    expect(refused).toBe(true);
    // Twenty in all: these, and perhaps the readiness probe's own keep-alive connection.
    expect(held.length).toBeGreaterThanOrEqual(19);
    expect(held.length).toBeLessThanOrEqual(20);

    // Once the server has seen some go, it serves again.
    for (const socket of held) socket.destroy();
    let reply = "";
    for (let i = 0; i < 50 && !reply.startsWith("HTTP/1.1 200"); i++) {
      const socket = await open(server.port);
      socket.on("error", () => {});
      reply = await ask(socket);
      socket.destroy();
    }
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
  }, 30_000);
});
