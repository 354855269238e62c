import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemScheduler } from "../../clock.js";
import { ManualClock } from "../../manual-clock.js";
import { ffmpeg } from "../../media/ffmpeg.js";
import { ProviderError } from "../types.js";
import { progressFromLogs, vendorInput } from "./input.js";
import { fetchOutputVideo } from "./output.js";
import {
  retryAfterMs,
  UnansweredCreate,
  type VendorCall,
  VendorError,
  vendorFetch,
  vendorUrl,
} from "./vendor-http.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler = (_req, res) => res.end();
let server: Server;
let base = "";
let requests = 0;
let authorizations: (string | undefined)[] = [];
let video = Buffer.alloc(0);

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    authorizations.push(req.headers.authorization);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), "vendor-http-"));
  const file = join(dir, "v.mp4");
  await ffmpeg(
    ["-f", "lavfi", "-i", "testsrc2=size=160x90:rate=10:duration=2", "-pix_fmt", "yuv420p", file],
    {
      timeoutMs: 30_000,
    },
  );
  video = await readFile(file);
  await rm(dir, { recursive: true, force: true });
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
afterEach(() => {
  requests = 0;
  authorizations = [];
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

function call(overrides: Partial<VendorCall> = {}): VendorCall {
  return {
    provider: "vendor",
    baseUrl: base,
    authorization: "Key secret-token-123",
    scheduler: systemScheduler,
    now: Date.now,
    signal: new AbortController().signal,
    deadline: Date.now() + 10_000,
    backoffMs: 5,
    maxBackoffMs: 20,
    random: () => 0.5,
    ...overrides,
  };
}

describe("vendorFetch", () => {
  it("sends the credential and JSON, and parses the answer", async () => {
    handler = (req, res) => {
      let body = "";
      req
        .on("data", (c) => (body += c))
        .on("end", () => json(res, 201, { got: JSON.parse(body), path: req.url }));
    };
    const res = await vendorFetch(call(), { method: "POST", url: "/v1/things?x=1", body: { a: 1 } });
    expect(res).toMatchObject({ status: 201, body: { got: { a: 1 }, path: "/v1/things?x=1" } });
    expect(authorizations).toEqual(["Key secret-token-123"]);
  });

  it("retries 5xx bursts and dropped connections, then succeeds", async () => {
    let n = 0;
    handler = (req, res) => {
      n++;
      if (n === 1) return json(res, 503, { detail: "busy" });
      if (n === 2) return req.socket.destroy();
      json(res, 200, { ok: true });
    };
    const res = await vendorFetch(call(), { method: "GET", url: "/status" });
    expect(res.body).toEqual({ ok: true });
    expect(requests).toBe(3);
  });

  it("waits what Retry-After asks on a 429, on the scheduler", async () => {
    const clock = new ManualClock(new Date("2026-01-01T00:00:00Z"));
    let n = 0;
    handler = (_req, res) =>
      ++n === 1 ? json(res, 429, { detail: "slow down" }, { "retry-after": "7" }) : json(res, 200, {});
    const done = vendorFetch(
      call({ scheduler: clock, now: () => clock.now().getTime(), deadline: clock.now().getTime() + 60_000 }),
      {
        method: "GET",
        url: "/status",
      },
    );
    await expect.poll(() => clock.pendingTimers).toBe(1);
    await clock.advance(6_999);
    expect(requests).toBe(1);
    await clock.advance(1);
    await expect(done).resolves.toMatchObject({ status: 200 });
    expect(requests).toBe(2);
  });

  it("gives up when the next wait would pass the deadline, saying what the vendor said", async () => {
    handler = (_req, res) => json(res, 429, { detail: "rate limited" }, { "retry-after": "30" });
    const err = await vendorFetch(call({ deadline: Date.now() + 1_000 }), { method: "GET", url: "/s" }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(VendorError);
    expect(err).toMatchObject({ status: 429, retryable: true });
    expect(err.message).toContain("rate limited");
    expect(requests).toBe(1);
  });

  it("does not retry a vendor's refusal, nor a call marked once, and never shows the credential", async () => {
    handler = (_req, res) => json(res, 422, { detail: [{ loc: ["body", "prompt"], msg: "field required" }] });
    const refused = await vendorFetch(call(), { method: "POST", url: "/x", body: {} }).catch((e) => e);
    expect(refused).toMatchObject({ status: 422, retryable: false });
    expect(refused.message).toContain("body.prompt: field required");
    expect(refused.message).not.toContain("secret-token-123");
    handler = (_req, res) => json(res, 500, { detail: "boom" });
    await expect(vendorFetch(call(), { method: "POST", url: "/x", once: true })).rejects.toMatchObject({
      status: 500,
    });
    expect(requests).toBe(2);
  });

  it("takes listed statuses as answers, and follows URLs only on the vendor's own origin", async () => {
    handler = (_req, res) => json(res, 409, { detail: "busy" });
    await expect(vendorFetch(call(), { method: "PUT", url: "/p/1", accept: [409] })).resolves.toMatchObject({
      status: 409,
    });
    expect(() => vendorUrl(base, "http://169.254.169.254/latest")).toThrow(/not its own/);
    expect(vendorUrl(`${base}/api`, `${base}/queue/1/status`).pathname).toBe("/queue/1/status");
    expect(vendorUrl(`${base}/api`, "models/x").pathname).toBe("/api/models/x");
  });

  it("stops at once when the run is aborted", async () => {
    const controller = new AbortController();
    // Never answers; the run is aborted once the server holds the request.
    handler = () => controller.abort(new Error("cancelled"));
    const pending = vendorFetch(call({ signal: controller.signal }), { method: "GET", url: "/hang" });
    await expect(pending).rejects.toThrow("cancelled");
  });

  it("never sends a create again after a failure that may have reached the vendor", async () => {
    for (const answer of [
      (_req: IncomingMessage, res: ServerResponse) => res.socket?.destroy(),
      (_req: IncomingMessage, res: ServerResponse) => json(res, 502, { detail: "bad gateway" }),
    ]) {
      // Counted by path: only this test's creates.
      let creates = 0;
      handler = (req, res) => {
        if (req.url === "/create") creates++;
        answer(req, res);
      };
      const failed = await vendorFetch(call(), {
        method: "POST",
        url: "/create",
        body: {},
        creates: true,
      }).catch((err: unknown) => err);
      expect(failed).toBeInstanceOf(UnansweredCreate);
      expect(creates).toBe(1);
    }
  });

  it("sends a create again after a 429 or a refused connection: neither reached the vendor", async () => {
    let n = 0;
    handler = (_req, res) =>
      n++ === 0 ? json(res, 429, { detail: "slow down" }) : json(res, 201, { id: "j1" });
    const created = await vendorFetch(call(), { method: "POST", url: "/create", body: {}, creates: true });
    expect(created).toMatchObject({ status: 201, body: { id: "j1" } });
    expect(requests).toBe(2);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await vendorFetch(
      call({ baseUrl: `http://127.0.0.1:${port}`, deadline: Date.now() + 200 }),
      {
        method: "POST",
        url: "/create",
        creates: true,
      },
    ).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(VendorError);
    expect(refused).not.toBeInstanceOf(UnansweredCreate);
  });

  it("reads Retry-After as seconds or a date", () => {
    expect(retryAfterMs("3", 0)).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs("soon", 0)).toBeNull();
    expect(retryAfterMs(null, 0)).toBeNull();
  });
});

describe("fetchOutputVideo", () => {
  let workDir = "";
  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), "vendor-output-"));
  });
  afterAll(() => rm(workDir, { recursive: true, force: true }));
  const options = () => ({ workDir, signal: new AbortController().signal, allowLocal: true });

  it("downloads a video URL and probes its length", async () => {
    handler = (_req, res) => res.writeHead(200, { "content-type": "video/mp4" }).end(video);
    const result = await fetchOutputVideo(`${base}/out.mp4`, options());
    expect(result.durationSeconds).toBeCloseTo(2, 1);
  });

  it("streams the download to disk and stops a body past the size limit as it arrives", async () => {
    handler = (_req, res) => {
      // No Content-Length: the limit can only be enforced while the body streams.
      res.writeHead(200, { "content-type": "video/mp4" });
      res.write(video);
      res.end(video);
    };
    const result = await fetchOutputVideo(`${base}/twice.mp4`, options());
    expect(result.path.startsWith(workDir)).toBe(true);
    await expect(
      fetchOutputVideo(`${base}/twice.mp4`, { ...options(), maxBytes: video.length + 10 }),
    ).rejects.toThrow(/Could not download the model's video: .*more than/);
  });

  it("cuts off a video that trickles in below the minimum transfer rate", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4" });
      res.write(video.subarray(0, 16));
      const timer = setInterval(() => res.write(Buffer.alloc(8)), 50);
      res.on("close", () => clearInterval(timer));
    };
    await expect(
      fetchOutputVideo(`${base}/trickle.mp4`, {
        ...options(),
        minRate: { bytesPerSecond: 4096, windowMs: 200 },
      }),
    ).rejects.toThrow(
      /Could not download the model's video: .*a download must average at least 4096 bytes\/s/,
    );
  });

  it("decodes a data: URL", async () => {
    const result = await fetchOutputVideo(`data:video/mp4;base64,${video.toString("base64")}`, options());
    expect(result.durationSeconds).toBeCloseTo(2, 1);
  });

  it("refuses what is not a video, a missing output, a failed download and a blocked host", async () => {
    handler = (_req, res) =>
      res.writeHead(200, { "content-type": "video/mp4" }).end("<html>not a video</html>");
    await expect(fetchOutputVideo(`${base}/fake.mp4`, options())).rejects.toThrow(/not an MP4/);
    await expect(fetchOutputVideo(null, options())).rejects.toThrow(ProviderError);
    await expect(fetchOutputVideo("not a url", options())).rejects.toThrow(/not a URL/);
    handler = (_req, res) => res.writeHead(404).end();
    await expect(fetchOutputVideo(`${base}/gone.mp4`, options())).rejects.toThrow(/answered 404/);
    await expect(fetchOutputVideo(`${base}/x.mp4`, { ...options(), allowLocal: false })).rejects.toThrow(
      /Could not download/,
    );
  });
});

describe("vendor input and progress", () => {
  it("renames fields and adds a route's fixed input", () => {
    expect(
      vendorInput(
        { prompt: "p", image_urls: ["u"], duration: "4s" },
        { rename: { image_urls: "images" }, input: { fps: 24 } },
      ),
    ).toEqual({ prompt: "p", images: ["u"], duration: "4s", fps: 24 });
  });

  it("sends only some fields, or all but some, and reads some as numbers", () => {
    const input = { prompt: "p", image_urls: ["u"], duration: "8s", resolution: "720p", seed: 3 };
    expect(vendorInput(input, { only: ["prompt", "duration"], asNumber: ["duration"] })).toEqual({
      prompt: "p",
      duration: 8,
    });
    expect(vendorInput(input, { omit: ["resolution", "seed"], rename: { image_urls: "image" } })).toEqual({
      prompt: "p",
      image: ["u"],
      duration: "8s",
    });
    expect(vendorInput({ a: "10", b: "2.5", c: "auto", d: 4 }, { asNumber: ["a", "b", "c", "d"] })).toEqual({
      a: 10,
      b: 2.5,
      c: "auto",
      d: 4,
    });
  });

  it("reads the last progress-bar percentage from logs, as text or as fal's log lines", () => {
    expect(progressFromLogs(" 25%|██▌       | 1/4\n 50%|█████     | 2/4")).toBe(0.5);
    expect(progressFromLogs([{ message: "Starting" }, { message: "75%|███████▌  | 3/4" }])).toBe(0.75);
    expect(progressFromLogs("no bar here")).toBeUndefined();
    expect(progressFromLogs(null)).toBeUndefined();
  });
});
