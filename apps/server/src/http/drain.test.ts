import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { Drain } from "./drain.js";
import type { HttpError } from "./http-errors.js";

let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
});

/** A server whose every request is held by `drain` until the test or, at the deadline, `answer` ends it. */
async function heldServer(drain: Drain, answer: (res: ServerResponse) => void) {
  const held: ServerResponse[] = [];
  server = createServer((_req, res) => {
    res.writeHead(201, { "content-type": "application/json" });
    res.flushHeaders();
    drain.hold(res);
    held.push(res);
    drain.deadline.addEventListener("abort", () => answer(res), { once: true });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const send = async () => (await fetch(url)).text();
  return { held, send };
}

describe("Drain", () => {
  it("settles at once when nothing is held, and tells later holders to answer now", async () => {
    const drain = new Drain();
    await drain.settle(60_000);
    expect(drain.started.aborted).toBe(true);
    expect(drain.deadline.aborted).toBe(true);
  });

  it("waits for a held response to end by itself, without reaching the deadline", async () => {
    const drain = new Drain();
    const { held, send } = await heldServer(drain, (res) => res.end('"late"'));
    const body = send();
    await expect.poll(() => held.length).toBe(1);
    const settled = drain.settle(60_000);
    held[0]?.end('"ended"');
    await settled;
    expect(await body).toBe('"ended"');
    expect(drain.size).toBe(0);
  });

  it("at the deadline tells held responses to answer now, and waits for their answers", async () => {
    const drain = new Drain();
    const { held, send } = await heldServer(drain, (res) => setImmediate(() => res.end('"as it stands"')));
    const bodies = [send(), send()];
    await expect.poll(() => held.length).toBe(2);
    await drain.settle(10);
    expect(drain.size).toBe(0);
    expect(await Promise.all(bodies)).toEqual(['"as it stands"', '"as it stands"']);
  });

  it("hurry() cuts the wait short", async () => {
    const drain = new Drain();
    const { held, send } = await heldServer(drain, (res) => res.end('"now"'));
    const body = send();
    await expect.poll(() => held.length).toBe(1);
    const settled = drain.settle(3_600_000);
    drain.hurry();
    await settled;
    expect(await body).toBe('"now"');
  });

  it.each([
    ["/v1/account", 503],
    ["/healthz", 200],
    ["/readyz", 200],
    ["/metrics", 200],
  ])("while draining, answers %s with %i and closes the connection", async (path, status) => {
    const drain = new Drain();
    const app = express();
    app.use(drain.refuseWhileDraining());
    app.use((_req, res) => {
      res.json({ ok: true });
    });
    app.use(((err, _req, res, _next) => {
      const e = err as HttpError;
      res
        .set(e.headers)
        .set("retry-after", String(e.retryAfterSeconds))
        .status(e.status)
        .json({ type: e.type });
    }) as express.ErrorRequestHandler);
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server?.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    const before = await fetch(url);
    expect([before.status, before.headers.get("connection")]).toEqual([200, "keep-alive"]);
    drain.begin();
    const during = await fetch(url);
    expect([during.status, during.headers.get("connection")]).toEqual([status, "close"]);
    if (status === 503) {
      expect(during.headers.get("retry-after")).toBe("1");
      expect(await during.json()).toEqual({ type: "service_unavailable" });
    }
  });
});
