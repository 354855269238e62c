/**
 * The HTTP edge, over raw sockets: keys are checked before a body is read, bodies are capped and
 * a too-large one is `413` with the usual JSON error, stray bytes after a request get a JSON `400`
 * after that request's own answer and a graceful close (never a reset), `Authorization` takes
 * exactly `Key <key>` or `Bearer <key>`, and a client that abandons a download is not an error.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type RunningRefvid, startRefvid } from "../src/runtime.js";
import { eventually, startTestRefvid, type Tenant, useTestRefvid } from "./harness.js";

const SUBMIT = "/v1/run/lab-a/model-a/reference-to-video";
/** The body limit: 512 KiB. */
const MAX_BODY_BYTES = 512 * 1024;

const t = useTestRefvid();
let tenant: Tenant;
let port: number;

beforeAll(async () => {
  tenant = await t.tenant({ rateLimitPerMinute: 100_000, balanceUsd: "1000.00" });
  port = Number(new URL(t.url).port);
});

interface Exchange {
  /** Everything the server sent, as text. */
  received: string;
  /** The first response's status, once its status line arrived. */
  status?: number;
  /** A socket error (`ECONNRESET`, `EPIPE`) seen before the server closed gracefully. */
  error?: string;
  /** The server ended the connection (FIN). */
  ended: boolean;
}

/**
 * Writes `head` and then `body` on a fresh connection; resolves when the server has answered
 * `until` (the default: a complete first response) or closed, or after `waitMs`.
 */
function exchange(
  head: string,
  body: Buffer | string = "",
  {
    waitMs = 5_000,
    until = firstResponseComplete,
  }: { waitMs?: number; until?: (e: Exchange) => boolean } = {},
): Promise<Exchange> {
  return new Promise((resolve) => {
    const result: Exchange = { received: "", ended: false };
    const socket = connect(port, "127.0.0.1");
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(finish, waitMs);
    socket.on("data", (chunk) => {
      result.received += chunk.toString("latin1");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(result.received)?.[1];
      if (status) result.status = Number(status);
      if (until(result)) finish();
    });
    socket.on("end", () => {
      result.ended = true;
      finish();
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      result.error = err.code ?? err.message;
      finish();
    });
    socket.write(head);
    if (body.length) socket.write(body);
  });
}

/** True once the first response's whole body (by Content-Length) has arrived. */
function firstResponseComplete(e: Exchange): boolean {
  const headEnd = e.received.indexOf("\r\n\r\n");
  if (headEnd < 0) return false;
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(e.received.slice(0, headEnd))?.[1] ?? 0);
  return e.received.length >= headEnd + 4 + length;
}

/** The JSON body of the first response. */
function firstJson(e: Exchange): any {
  const headEnd = e.received.indexOf("\r\n\r\n");
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(e.received.slice(0, headEnd))?.[1] ?? 0);
  return JSON.parse(
    Buffer.from(e.received.slice(headEnd + 4, headEnd + 4 + length), "latin1").toString("utf8"),
  );
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const head = (method: string, path: string, headers: Record<string, string | number>) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

describe("request bodies", () => {
  it("answers a request without a valid key before reading its body", async () => {
    // A 1 MB body announced, 10 bytes sent: the 401 must not wait for the rest.
    const anonymous = await exchange(
      head("POST", SUBMIT, { "content-type": "application/json", "content-length": 1_048_576 }),
      '{"input": ',
    );
    expect(anonymous.status).toBe(401);
    expect(firstJson(anonymous)).toMatchObject({ error: { type: "unauthorized", code: 401 } });

    const badKey = await exchange(
      head("POST", SUBMIT, {
        authorization: "Key sk-test-nope",
        "content-type": "application/json",
        "content-length": 1_048_576,
      }),
      '{"input": ',
    );
    expect(badKey.status).toBe(401);

    const badAdmin = await exchange(
      head("POST", "/admin/v1/organizations", {
        authorization: "Bearer not-the-token",
        "content-type": "application/json",
        "content-length": 1_048_576,
      }),
      '{"name": ',
    );
    expect(badAdmin.status).toBe(401);
  });

  it("refuses an announced body over the limit with 413 naming the limit, without reading it", async () => {
    const res = await exchange(
      head("POST", SUBMIT, {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "content-length": MAX_BODY_BYTES + 1,
      }),
      '{"input": ',
    );
    expect(res.status).toBe(413);
    expect(firstJson(res)).toMatchObject({
      error: { type: "payload_too_large", code: 413, message: expect.stringContaining("512 KiB") },
    });
  });

  it("refuses a chunked body that grows over the limit with 413", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const chunks = Math.ceil((MAX_BODY_BYTES + 1) / chunk.length);
    const body = Buffer.concat([
      ...Array.from({ length: chunks }, () =>
        Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]),
      ),
      Buffer.from("0\r\n\r\n"),
    ]);
    const res = await exchange(
      head("POST", "/v1/runs/search", {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "transfer-encoding": "chunked",
      }),
      body,
    );
    expect(res.status).toBe(413);
    expect(firstJson(res)).toMatchObject({ error: { type: "payload_too_large", code: 413 } });
  });

  it("accepts the largest body the spec allows, even with every non-ASCII character escaped", async () => {
    const E = "😀";
    const url = (i: number) => {
      const prefix = `https://example.com/${i}/`;
      return prefix + "a".repeat(2048 - prefix.length);
    };
    const body = {
      input: {
        prompt: E.repeat(2000),
        duration: "auto",
        image_urls: Array.from({ length: 30 }, (_, i) => url(i)),
        video_urls: Array.from({ length: 10 }, (_, i) => url(100 + i)),
        audio_urls: Array.from({ length: 10 }, (_, i) => url(200 + i)),
        resolution: "1080p",
        aspect_ratio: "16:9",
        bitrate_mode: "standard",
        generate_audio: true,
        end_user_id: E.repeat(256),
      },
      webhook_url: url(999),
      sync: false,
      metadata: Object.fromEntries(
        Array.from({ length: 16 }, (_, i) => [String(i).padStart(2, "0") + E.repeat(38), E.repeat(500)]),
      ),
    };
    // As an encoder with ensure_ascii would write it: every UTF-16 unit as \uXXXX.
    const text = JSON.stringify(body).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    expect(Buffer.byteLength(text)).toBeGreaterThan(230_000);
    const res = await tenant.call("POST", SUBMIT, text);
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201, body: { status: "queued" } });
  });

  it("ignores a small body on GET and DELETE, and answers a large one 413, never with a reset", async () => {
    const small = await exchange(
      head("GET", "/v1/account", {
        authorization: `Key ${tenant.apiKey}`,
        "content-type": "application/json",
        "content-length": 9,
      }),
      "not json!",
    );
    expect(small.status).toBe(200);

    const large = await new Promise<{ status?: number; body?: string; error?: string }>((resolve) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method: "GET",
          path: "/v1/account",
          headers: { authorization: `Key ${tenant.apiKey}`, "content-length": 1_048_576 },
        },
        (res) => {
          let text = "";
          res.on("data", (c) => {
            text += c;
          });
          res.on("end", () => resolve({ status: res.statusCode, body: text }));
          res.on("error", (err: NodeJS.ErrnoException) =>
            resolve({ status: res.statusCode, error: err.code }),
          );
        },
      );
      req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code }));
      req.end(Buffer.alloc(1_048_576, 0x61));
    });
    expect(large).toMatchObject({ status: 413 });
    expect(parseJson(large.body ?? "")).toMatchObject({ error: { type: "payload_too_large" } });
  });

  it("answers GET and DELETE sent by node:http with a body (no framing) with their own answers, then 400s the stray bytes and closes cleanly", async () => {
    const key = await t.admin("POST", `/admin/v1/organizations/${tenant.organizationId}/api-keys`, {});
    const viaNodeHttp = (method: string, path: string, authorization: string) =>
      new Promise<{ status?: number; body?: any; error?: string }>((resolve) => {
        // node:http sends a GET or DELETE body with neither Content-Length nor chunking.
        const req = request({ host: "127.0.0.1", port, method, path, headers: { authorization } }, (res) => {
          let text = "";
          res.on("data", (c) => {
            text += c;
          });
          res.on("end", () => resolve({ status: res.statusCode, body: parseJson(text) }));
          res.on("error", (err: NodeJS.ErrnoException) =>
            resolve({ status: res.statusCode, error: err.code }),
          );
        });
        req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code }));
        req.end(Buffer.alloc(1_048_576, 0x61));
      });

    const get = await viaNodeHttp("GET", "/v1/account", `Key ${tenant.apiKey}`);
    expect(get).toMatchObject({ status: 200, body: { organization_id: tenant.organizationId } });
    const revoke = await viaNodeHttp(
      "DELETE",
      `/admin/v1/api-keys/${key.body.api_key_id}`,
      `Bearer ${t.adminToken}`,
    );
    expect(revoke).toMatchObject({ status: 200, body: { api_key_id: key.body.api_key_id } });

    // On the wire: the request's answer, then a JSON 400 for the bytes after it, then FIN.
    const wire = await exchange(
      head("DELETE", `/admin/v1/api-keys/${key.body.api_key_id}`, {
        authorization: `Bearer ${t.adminToken}`,
      }),
      Buffer.alloc(1_048_576, 0x61),
      { until: () => false },
    );
    expect(wire.error).toBeUndefined();
    expect(wire.ended).toBe(true);
    const responses = wire.received.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(responses.map((r) => Number(r.slice(9, 12)))).toEqual([200, 400]);
    expect(parseJson(responses[1]?.split("\r\n\r\n")[1] ?? "")).toMatchObject({
      error: { type: "invalid_request", code: 400 },
    });
  });
});

describe("the Authorization header", () => {
  const status = (authorization: string, path = "/v1/account") =>
    new Promise<{ status?: number; body?: any }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path, headers: { authorization } }, (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode, body: parseJson(text) }));
      });
      req.on("error", reject);
      req.end();
    });

  it.each<[string, (key: string) => string]>([
    ["Key <key>", (k) => `Key ${k}`],
    ["Bearer <key>", (k) => `Bearer ${k}`],
    ["the scheme in any case", (k) => `kEY ${k}`],
    ["BEARER", (k) => `BEARER ${k}`],
    ["a trailing space (HTTP trims it)", (k) => `Key ${k} `],
    ["a trailing tab (HTTP trims it)", (k) => `Key ${k}\t`],
  ])("accepts %s", async (_label, header) => {
    expect((await status(header(tenant.apiKey))).status).toBe(200);
  });

  it.each<[string, (key: string) => string]>([
    ["two spaces", (k) => `Key  ${k}`],
    ["a tab", (k) => `Key\t${k}`],
    ["a tab after Bearer", (k) => `Bearer\t${k}`],
    ["a space and a tab", (k) => `Key \t${k}`],
    ["no space", (k) => `Key${k}`],
    ["a second word", (k) => `Key ${k} ${k}`],
    ["another scheme", (k) => `Basic ${k}`],
  ])("refuses %s with 401", async (_label, header) => {
    const res = await status(header(tenant.apiKey));
    expect(res).toMatchObject({ status: 401, body: { error: { type: "unauthorized", code: 401 } } });
  });

  it("takes the admin token the same way", async () => {
    const orgs = `/admin/v1/organizations/${tenant.organizationId}`;
    expect((await status(`Bearer ${t.adminToken}`, orgs)).status).toBe(200);
    expect((await status(`bearer ${t.adminToken} `, orgs)).status).toBe(200);
    expect((await status(`Bearer  ${t.adminToken}`, orgs)).status).toBe(401);
    expect((await status(`Bearer\t${t.adminToken}`, orgs)).status).toBe(401);
  });
});

describe("the request timeout", () => {
  it("bounds receiving a request, not answering it: a sync submit waits past it for its run", async () => {
    const slow = await startTestRefvid({
      REFVID_REQUEST_TIMEOUT_MS: "500",
      REFVID_HEADERS_TIMEOUT_MS: "500",
      REFVID_SIMULATED_LATENCY_MS: "2000",
    });
    try {
      const someone = await slow.tenant();
      const started = performance.now();
      const res = await someone.call("POST", "/v1/run/lab-d/model-d/reference-to-video", {
        input: { prompt: "p", image_urls: ["https://example.com/a.png"], duration: "4s" },
        sync: true,
      });
      expect(performance.now() - started).toBeGreaterThan(1_500);
      expect({ status: res.status, body: res.body }).toMatchObject({
        status: 201,
        body: { status: "succeeded" },
      });
    } finally {
      await slow.close();
    }
    expect(slow.mismatches).toEqual([]);
  });
});

describe("file downloads", () => {
  let refvid: RunningRefvid;
  const lines: { level: number; msg: string }[] = [];

  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "refvid-edge-"));
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const config = loadConfig({
      REFVID_STORE: "memory",
      PORT: "0",
      REFVID_PROVIDER: "simulated",
      REFVID_DATA_DIR: dataDir,
      REFVID_SEED_DEMO: "false",
    });
    refvid = await startRefvid(config, { logger: pino({ level: "debug" }, sink) });
  });
  afterAll(async () => {
    await refvid.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("a client that abandons a download mid-stream is logged at debug, not as an error", async () => {
    const source = join(dataDir, "source.mp4");
    await writeFile(source, Buffer.alloc(64 * 1024 * 1024, 1));
    const fileId = `file_edge${process.pid}abandoned`;
    await refvid.deps.blobs.put(fileId, source);
    const signed = new URL(refvid.deps.signer.url(fileId, new Date()));
    const { port: serverPort } = new URL(refvid.url);

    await new Promise<void>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: serverPort, path: `${signed.pathname}${signed.search}` },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? undefined : reject(err)));
      req.end();
    });
    // The server notices the abandoned stream and says so once.
    await eventually(
      async () => (lines.some((l) => l.level >= 50 || /download/.test(l.msg)) ? true : undefined),
      10_000,
      "the server to notice the abandoned download",
    );
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(lines.find((l) => /download/.test(l.msg))?.level).toBe(20);
  });
});
