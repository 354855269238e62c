import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkWebhookUrl } from "../services/webhook-url.js";
import { FetchRefused, type GuardOptions, guardedFetch } from "./guarded-fetch.js";

// A server on 127.0.0.1 that the tests allow explicitly; everything else keeps the real policy.
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    if (path === "/ok") return res.end("fine");
    if (path === "/redirect-loopback")
      return res.writeHead(302, { location: "http://127.0.0.2/secret" }).end();
    if (path === "/redirect-metadata")
      return res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (path === "/redirect-file") return res.writeHead(302, { location: "file:///etc/passwd" }).end();
    if (path === "/redirect-loop") return res.writeHead(302, { location: "/redirect-loop" }).end();
    if (path === "/redirect-ok") return res.writeHead(302, { location: "/ok" }).end();
    if (path === "/big")
      return res.writeHead(200, { "content-length": String(10_000) }).end(Buffer.alloc(10_000));
    if (path === "/endless") {
      res.writeHead(200);
      const timer = setInterval(() => res.write(Buffer.alloc(4096)), 1);
      res.on("close", () => clearInterval(timer));
      return;
    }
    if (path === "/slow") return setTimeout(() => res.end("late"), 3000);
    // [bytes, every ms, chunks]: a body that keeps coming, at a rate the test picks.
    const trickle = { "/crawl": [10, 50, 1000], "/steady": [1024, 20, 40], "/mute": [0, 50, 1000] }[path];
    if (trickle) {
      const [bytes, everyMs, chunks] = trickle as [number, number, number];
      res.writeHead(200);
      let sent = 0;
      const timer = setInterval(() => {
        if (++sent > chunks) return res.end();
        if (bytes > 0) res.write(Buffer.alloc(bytes));
      }, everyMs);
      res.on("close", () => clearInterval(timer));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const strict: GuardOptions = { allowLocal: false, timeoutMs: 2000, maxBytes: 1024, maxRedirects: 3 };
const fakeDns: Record<string, string[]> = {
  "intranet.example": ["10.1.2.3"],
  "rebind.example": ["93.184.216.34", "127.0.0.1"],
  "metadata.example": ["169.254.169.254"],
  "v6local.example": ["fd12::1"],
  "public.example": ["93.184.216.34"],
  "mapped.example": ["::ffff:a9fe:a9fe"],
  "documentation.example": ["2001:db8::10", "93.184.216.34"],
};
const resolve = async (host: string) => {
  const found = fakeDns[host];
  if (!found) throw new Error("ENOTFOUND");
  return found;
};

// [url, reason]: every spelling of the operator's own network, refused before any connection.
const hostile: [string, string][] = [
  ["http://127.0.0.1/", "blocked_address"],
  ["http://127.1/", "blocked_address"],
  ["http://2130706433/", "blocked_address"],
  ["http://0x7f000001/", "blocked_address"],
  ["http://017700000001/", "blocked_address"],
  ["http://0177.0.0.1/", "blocked_address"],
  ["http://0x7f.0x0.0x0.0x1/", "blocked_address"],
  ["http://[::1]/", "blocked_address"],
  ["http://[::ffff:127.0.0.1]/", "blocked_address"],
  ["http://[::ffff:7f00:1]/", "blocked_address"],
  ["http://[::127.0.0.1]/", "blocked_address"],
  ["http://0.0.0.0/", "blocked_address"],
  ["http://0/", "blocked_address"],
  ["http://[::]/", "blocked_address"],
  ["http://169.254.169.254/latest/meta-data/", "blocked_address"],
  ["http://[fd00:ec2::254]/", "blocked_address"],
  ["http://[64:ff9b::a9fe:a9fe]/", "blocked_address"],
  ["http://10.0.0.1/", "blocked_address"],
  ["http://172.16.5.4/", "blocked_address"],
  ["http://192.168.0.1/", "blocked_address"],
  ["http://100.64.0.1/", "blocked_address"],
  ["http://224.0.0.1/", "blocked_address"],
  ["http://255.255.255.255/", "blocked_address"],
  ["http://[fe80::1]/", "blocked_address"],
  ["http://[ff02::1]/", "blocked_address"],
  ["http://[::ffff:0:0]/", "blocked_address"],
  ["http://[::ffff:0:7f00:1]/", "blocked_address"],
  ["http://[64:ff9b:1::a9fe:a9fe]/", "blocked_address"],
  ["http://[100::1]/", "blocked_address"],
  ["http://[2001:db8::1]/", "blocked_address"],
  ["http://[3fff::1]/", "blocked_address"],
  ["http://192.0.2.1/", "blocked_address"],
  ["http://198.51.100.1/", "blocked_address"],
  ["http://203.0.113.1/", "blocked_address"],
  ["http://198.18.0.1/", "blocked_address"],
  ["http://[2002:c0a8:1::1]/", "blocked_address"],
  ["http://[fc00::1]/", "blocked_address"],
  ["http://mapped.example/", "blocked_address"],
  ["http://documentation.example/", "blocked_address"],
  ["http://localhost/", "blocked_name"],
  ["http://localhost./", "blocked_name"],
  ["http://metadata.google.internal/computeMetadata/v1/", "blocked_name"],
  ["http://printer.local/", "blocked_name"],
  ["http://intranet.example/", "blocked_address"],
  ["http://rebind.example/", "blocked_address"],
  ["http://metadata.example/", "blocked_address"],
  ["http://v6local.example/", "blocked_address"],
  ["http://no-such-host.example/", "dns"],
  ["file:///etc/passwd", "scheme"],
  ["ftp://example.com/a.png", "scheme"],
  ["gopher://example.com/", "scheme"],
  ["data:text/plain,hello", "scheme"],
  ["http://user:pass@public.example/", "credentials"],
];

describe("guardedFetch refuses the operator's network", () => {
  it("has a corpus of at least 30 hostile URLs", () => expect(hostile.length).toBeGreaterThanOrEqual(30));

  it.each(hostile)("refuses %s (%s) as a reference download", async (url, reason) => {
    const error = await guardedFetch(url, {}, { ...strict, resolve }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchRefused);
    expect((error as FetchRefused).reason).toBe(reason);
    expect((error as FetchRefused).message.length).toBeGreaterThan(8);
  });

  it.each(hostile)("refuses %s as a webhook delivery", async (url, reason) => {
    const error = await guardedFetch(
      url,
      { method: "POST", body: "{}" },
      { ...strict, maxRedirects: 0, resolve },
    ).catch((e: unknown) => e);
    expect((error as FetchRefused).reason).toBe(reason);
  });

  it("refuses the same hosts at submit time for webhooks, naming the field", () => {
    const literal = hostile.filter(([url, reason]) => reason !== "dns" && !/\.example\//.test(url));
    for (const [url] of literal)
      expect(checkWebhookUrl(url.replace(/^http:/, "https:"), false), url).toHaveLength(1);
  });
});

describe("guardedFetch on an allowed server", () => {
  const local: GuardOptions = { ...strict, allowAddresses: new Set(["127.0.0.1"]) };

  it("fetches a page", async () => {
    const res = await guardedFetch(`${base}/ok`, {}, local);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("fine");
  });

  it("follows a redirect it may follow", async () => {
    const res = await guardedFetch(`${base}/redirect-ok`, {}, local);
    expect(res).toMatchObject({ status: 200, url: `${base}/ok` });
  });

  it.each([
    ["/redirect-loopback", "blocked_address", /127\.0\.0\.2 is loopback/],
    ["/redirect-metadata", "blocked_address", /169\.254\.169\.254 is link-local/],
    ["/redirect-file", "scheme", /file URLs are not fetched/],
    ["/redirect-loop", "redirects", /more than 3 redirects/],
    ["/big", "too_large", /sends 10000 bytes; the limit is 1024/],
    ["/endless", "too_large", /sent more than 1024 bytes/],
  ])("refuses %s (%s)", async (path, reason, message) => {
    const error = (await guardedFetch(`${base}${path}`, {}, local).catch((e: unknown) => e)) as FetchRefused;
    expect(error.reason).toBe(reason);
    expect(error.message).toMatch(message);
  });

  it("gives up on a server that does not answer in time", async () => {
    const started = Date.now();
    const error = (await guardedFetch(`${base}/slow`, {}, { ...local, timeoutMs: 200 }).catch(
      (e: unknown) => e,
    )) as FetchRefused;
    expect(error.reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2500);
  });

  describe("with a minimum transfer rate", () => {
    // 4 KiB/s over 200 ms: 819 bytes a window. Far below the timeout, which never fires here.
    const floored: GuardOptions = {
      ...local,
      timeoutMs: 60_000,
      maxBytes: 10 * 1024 * 1024,
      minRate: { bytesPerSecond: 4096, windowMs: 200 },
    };
    const dir = mkdtempSync(join(tmpdir(), "guarded-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it.each([
      [
        "a crawl of 200 bytes/s",
        "/crawl",
        /sent \d+ bytes in 0\.2 s; a download must average at least 4096 bytes\/s/,
      ],
      ["headers and then silence", "/mute", /sent 0 bytes in 0\.2 s/],
    ])("cuts off %s with too_slow, in memory and to a file", async (_name, path, message) => {
      for (const toFile of [undefined, join(dir, "body")]) {
        const error = (await guardedFetch(
          `${base}${path}`,
          {},
          { ...floored, ...(toFile ? { toFile } : {}) },
        ).catch((e: unknown) => e)) as FetchRefused;
        expect(error).toBeInstanceOf(FetchRefused);
        expect(error.reason).toBe("too_slow");
        expect(error.message).toMatch(message);
      }
    });

    it("lets a download at a dozen times the floor run its course", async () => {
      const res = await guardedFetch(`${base}/steady`, {}, floored);
      expect(res).toMatchObject({ status: 200 });
      expect(res.body.length).toBe(40 * 1024);
    });
  });

  it("returns a redirect unfollowed when told to follow none (webhooks)", async () => {
    const res = await guardedFetch(
      `${base}/redirect-loopback`,
      { method: "POST", body: "{}" },
      { ...local, maxRedirects: 0 },
    );
    expect(res.status).toBe(302);
  });

  it("opens loopback and private hosts when local URLs are allowed, but never cloud metadata", async () => {
    const open: GuardOptions = { ...strict, allowLocal: true };
    expect((await guardedFetch(`${base}/ok`, {}, open)).status).toBe(200);
    const metadata = (await guardedFetch("http://169.254.169.254/", {}, open).catch(
      (e: unknown) => e,
    )) as FetchRefused;
    expect(metadata.reason).toBe("blocked_address");
  });

  it.each([
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/",
    "http://[::ffff:7f00:1]/",
    "http://[64:ff9b:1::7f00:1]/",
    "http://192.0.2.1/",
    "http://[2001:db8::1]/",
  ])("refuses %s even when local URLs are allowed", async (url) => {
    const error = (await guardedFetch(url, {}, { ...strict, allowLocal: true }).catch(
      (e: unknown) => e,
    )) as FetchRefused;
    expect(error.reason).toBe("blocked_address");
  });
});
