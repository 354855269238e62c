/**
 * One client or one key cannot hold every connection (docs/decisions.md, "Requests at the edge"):
 * an address past REFVID_MAX_CONNECTIONS_PER_ADDRESS has its extra connections closed at once
 * while another address is served, and a key past REFVID_MAX_REQUESTS_PER_KEY requests in
 * progress is answered `429 too_many_open_requests` while another key is served. Clients come
 * from loopback addresses of their own (127.0.0.2, .3, .4), so the harness's own calls from
 * 127.0.0.1 stay out of the counts.
 */
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, type Tenant, useTestRefvid } from "./harness.js";
import { type SseEvent, stream } from "./sse.js";

const PER_ADDRESS = 5;
const PER_KEY = 3;

const t = useTestRefvid({
  REFVID_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
  REFVID_MAX_REQUESTS_PER_KEY: String(PER_KEY),
  // Held uploads here send a few bytes and wait: the body rate is another test's (uploads.e2e).
  REFVID_MIN_BODY_BYTES_PER_S: "0",
});

const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/**
 * A connection from `localAddress` that asks for /healthz and stays open after its answer:
 * resolves with what the server sent, once a whole answer is in or the server has closed it.
 */
async function healthzFrom(localAddress: string): Promise<{ socket: Socket; answer: string }> {
  const socket = connect({ port: Number(new URL(t.url).port), host: "127.0.0.1", localAddress });
  socket.on("error", () => {});
  opened.push(socket);
  const answer = await new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c;
      if (text.includes('{"status":"ok"}')) resolve(text);
    });
    socket.once("close", () => resolve(text));
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  });
  return { socket, answer };
}

describe("REFVID_MAX_CONNECTIONS_PER_ADDRESS", () => {
  it("closes an address's connections past its limit at once, while another address is served", async () => {
    const held: Socket[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) {
      const { socket, answer } = await healthzFrom("127.0.0.3");
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      held.push(socket);
    }
    // One more from the same address: closed before a byte of an answer.
    const extra = await healthzFrom("127.0.0.3");
    expect(extra.answer).toBe("");
    expect(extra.socket.destroyed).toBe(true);
    // Another client is served as usual.
    expect((await healthzFrom("127.0.0.2")).answer).toMatch(/^HTTP\/1\.1 200/);

    // Once the server has seen one of the address's connections go, it takes another.
    held[0]?.destroy();
    const again = await eventually(
      async () => {
        const { answer } = await healthzFrom("127.0.0.3");
        return answer.startsWith("HTTP/1.1 200") ? answer : undefined;
      },
      10_000,
      "a connection from 127.0.0.3 served again",
    );
    expect(again).toMatch(/^HTTP\/1\.1 200/);
  });
});

/**
 * An upload from `localAddress` whose body has only begun: it stays in progress until `stop`.
 * Resolves once the request is sent; `answer` has the status if the server answers first.
 */
function heldUpload(apiKey: string, localAddress: string) {
  const req = request(`${t.url}/v1/files`, {
    method: "POST",
    agent: false,
    localAddress,
    headers: { authorization: `Key ${apiKey}`, "content-type": "image/png", "content-length": "1048576" },
  });
  req.on("error", () => {});
  const answer = new Promise<number>((resolve) => {
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
  });
  req.write(Buffer.from("\x89PNG\r\n\x1a\n"));
  const held = { answer, answered: false, stop: () => req.destroy() };
  void answer.then(() => {
    held.answered = true;
  });
  return held;
}

describe("REFVID_MAX_REQUESTS_PER_KEY", () => {
  let busy: Tenant;
  let other: Tenant;

  it("answers a key past its requests in progress 429 too_many_open_requests, while another key is served", async () => {
    busy = await t.tenant({ rateLimitPerMinute: 100_000 });
    other = await t.tenant({ rateLimitPerMinute: 100_000 });
    // A run to follow later, made before the key is busy.
    const run = await busy.call("POST", "/v1/run/lab-d/model-d/reference-to-video", {
      input: { prompt: "followed", image_urls: ["https://example.com/a.png"] },
    });
    expect(run.status).toBe(201);

    const uploads = Array.from({ length: PER_KEY }, () => heldUpload(busy.apiKey, "127.0.0.4"));
    try {
      // Once the uploads are in progress, the key's next request is refused before it is read. A
      // poll that is itself in progress when an upload is authenticated takes that upload's place
      // (it is answered 429): such an upload is sent again.
      const refused = await eventually(
        async () => {
          for (const [i, upload] of uploads.entries()) {
            if (upload.answered) uploads[i] = heldUpload(busy.apiKey, "127.0.0.4");
          }
          const res = await busy.call("GET", "/v1/account");
          return res.status === 429 ? res : undefined;
        },
        10_000,
        `${PER_KEY} uploads in progress`,
      );
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(refused.body).toEqual({
        error: {
          type: "too_many_open_requests",
          code: 429,
          message: expect.stringMatching(new RegExp(`already has ${PER_KEY} requests in progress`)),
          request_id: refused.headers.get("x-request-id"),
        },
      });
      const upload = await busy.call("POST", "/v1/files", "more", { "content-type": "image/png" });
      expect(upload.status).toBe(429);

      // Another key is served; so is this key's event stream, which has a cap of its own.
      expect((await other.call("GET", "/v1/account")).status).toBe(200);
      const followed = await stream(t.url, busy.apiKey, run.body.run_id, {
        until: (events: SseEvent[]) => events.length >= 1,
      });
      expect(followed.status).toBe(200);
      expect(followed.events[0]?.data.run_id).toBe(run.body.run_id);
    } finally {
      for (const upload of uploads) upload.stop();
    }
    // When they end, the key is served again.
    const served = await eventually(
      async () => {
        const res = await busy.call("GET", "/v1/account");
        return res.status === 200 ? res : undefined;
      },
      10_000,
      "the key served again",
    );
    expect(served.status).toBe(200);
  });
});
