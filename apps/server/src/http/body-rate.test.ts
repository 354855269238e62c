import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { MinTransferRate } from "../net/rate-floor.js";
import { BODY_TOO_SLOW, BodyTooSlowError, guardBodyRate, judgeWindow } from "./body-rate.js";

const RATE: MinTransferRate = { bytesPerSecond: 1000, windowMs: 10_000 };

describe("judgeWindow", () => {
  it.each([
    ["a window not yet whole", { bytes: 0, ms: 9_999 }, "open"],
    ["a whole window at the rate", { bytes: 10_000, ms: 10_000 }, "kept"],
    ["a whole window just under it", { bytes: 9_999, ms: 10_000 }, "slow"],
    ["a longer window, judged by its own length", { bytes: 11_000, ms: 11_000 }, "kept"],
    ["a window with nothing in it", { bytes: 0, ms: 10_000 }, "slow"],
  ] as const)("%s is %s", (_name, window, want) => {
    expect(judgeWindow(window, RATE)).toBe(want);
  });

  it("names the rate measured and the rate asked for", () => {
    const err = new BodyTooSlowError({ bytes: 5_000, ms: 10_000 }, RATE);
    expect(err.code).toBe(BODY_TOO_SLOW);
    expect(err.message).toMatch(/at 500 bytes a second over 10 s, slower than the 1000 bytes a second/);
  });
});

describe("guardBodyRate", () => {
  const WINDOW_MS = 200;
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    server?.closeAllConnections();
    if (server) await new Promise((done) => server?.close(done));
  });

  /** A server whose handler hands each request to the test, guarded at 1000 bytes/s over 200 ms. */
  async function guarded() {
    const refused: Error[] = [];
    server = createServer();
    const request = once(server, "request").then(([req]) => req as IncomingMessage);
    guardBodyRate(server, { bytesPerSecond: 1000, windowMs: WINDOW_MS });
    server.on("clientError", (err: Error, socket: Socket) => {
      refused.push(err);
      socket.destroy();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    socket.on("error", () => {});
    sockets.push(socket);
    await once(socket, "connect");
    return { request, refused, socket };
  }

  it("refuses a body that stops coming once a window has passed", async () => {
    const { request, refused, socket } = await guarded();
    socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nabc");
    (await request).resume(); // the server reads what comes
    await once(socket, "close");
    expect(refused.map((e) => (e as BodyTooSlowError).code)).toEqual([BODY_TOO_SLOW]);
  });

  it("does not count time the server is behind: bytes it has not read are not the client's fault", async () => {
    const { request, refused, socket } = await guarded();
    // More than the request's buffer: the server, not reading, stops reading the socket too.
    socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n${"x".repeat(64 * 1024)}`);
    const req = await request;
    // Several windows while the server reads nothing: the client is not refused.
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS * 5));
    expect(req.readableLength).toBeGreaterThan(0);
    expect(refused).toEqual([]);
    // Once the server reads everything and waits, the client's silence counts.
    req.resume();
    await once(socket, "close");
    expect(refused.map((e) => (e as BodyTooSlowError).code)).toEqual([BODY_TOO_SLOW]);
  });

  it("lets a body at the rate arrive whole", async () => {
    const { request, refused, socket } = await guarded();
    socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n");
    const req = await request;
    req.resume();
    // 100 bytes every 20 ms is 5000 bytes a second, five times the rate.
    for (let sent = 0; sent < 2000; sent += 100) {
      socket.write("y".repeat(100));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!req.complete) await once(req, "end");
    expect(refused).toEqual([]);
  });
});
