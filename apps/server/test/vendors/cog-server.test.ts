/**
 * Conformance of the local Cog server with Cog's HTTP API, driven with plain fetch the way
 * docs/http.md shows a client doing it.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { probeDuration } from "../../src/media/ffmpeg.js";
import { eventually } from "./cog-adapter.js";
import { type CogHealth, type CogServer, type CogServerOptions, startCogServer } from "./cog-server.js";
import { vendorInputSchema } from "./vendor-schemas.js";

const servers: CogServer[] = [];
const closers: (() => Promise<void>)[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cog-server-test-"));
});
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((s) => s.close()), ...closers.splice(0).map((c) => c())]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cog(options: CogServerOptions = {}): Promise<CogServer> {
  const server = await startCogServer({ ...options, knobs: { latencyMs: 40, ...options.knobs } });
  servers.push(server);
  return server;
}

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function call(
  server: CogServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

const ASYNC = { prefer: "respond-async" };
const input = (prompt = "a slow dolly shot") => ({ input: { prompt } });

interface Delivery {
  body: any;
  headers: IncomingHttpHeaders;
}

/** A webhook receiver on loopback answering `answers` in turn (then 200). */
async function receiver(answers: number[] = []) {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => {
      deliveries.push({ body: JSON.parse(text), headers: req.headers });
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries };
}

async function outputBytes(output: string): Promise<Buffer> {
  if (output.startsWith("data:")) return Buffer.from(output.slice(output.indexOf(",") + 1), "base64");
  const res = await fetch(output);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("video/mp4");
  return Buffer.from(await res.arrayBuffer());
}

/** Length in seconds of the MP4 an output points to (a URL or a data URL). */
async function outputSeconds(output: string): Promise<number> {
  const bytes = await outputBytes(output);
  expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp");
  const file = join(dir, `${randomUUID()}.mp4`);
  await writeFile(file, bytes);
  return probeDuration(file, { timeoutMs: 15_000 });
}

describe("creating predictions", () => {
  it("an async PUT runs once, reports through webhooks, and its output URL is a real MP4", async () => {
    const server = await cog({ knobs: { outputAs: "url", webhookIntervalMs: 0, outputSeconds: 2 } });
    const hook = await receiver();
    const created = await call(
      server,
      "PUT",
      "/predictions/wjx3whax6rf4vphkegkhcvpv6a",
      {
        ...input(),
        webhook: hook.url,
      },
      ASYNC,
    );
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ id: "wjx3whax6rf4vphkegkhcvpv6a", status: "starting" });

    const done = await eventually(() => hook.deliveries.find((d) => d.body.status === "succeeded"));
    expect(done.headers["content-type"]).toBe("application/json");
    expect(done.headers["user-agent"]).toMatch(/^coglet\//);
    expect(done.body).toMatchObject({
      id: "wjx3whax6rf4vphkegkhcvpv6a",
      metrics: { predict_time: expect.any(Number) },
    });
    expect(done.body.logs).toContain("100%|██████████| 4/4");
    await expect
      .poll(() => server.stats.webhooks.map((w) => w.event), { timeout: 10_000 })
      .toEqual(["start", "logs", "logs", "logs", "logs", "logs", "completed"]);
    await eventually(() =>
      hook.deliveries.some((d) => d.body.status === "processing" && d.body.logs.includes("50%")),
    );
    expect(await outputSeconds(done.body.output)).toBeCloseTo(2, 0);

    expect(server.stats.submits).toBe(1);
    const [job] = server.jobsFor("wjx3whax6rf4vphkegkhcvpv6a");
    expect(job).toMatchObject({
      via: "PUT",
      async: true,
      status: "succeeded",
      cancelled: false,
      input: { prompt: "a slow dolly shot" },
    });
  });

  it("a sync PUT blocks until the prediction ends and answers 200 with the output as a data URL", async () => {
    const server = await cog({ knobs: { outputSeconds: 3 } });
    const done = await call(server, "PUT", "/predictions/sync-1", input());
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      id: "sync-1",
      status: "succeeded",
      metrics: { predict_time: expect.any(Number) },
    });
    expect(done.body.output).toMatch(/^data:video\/mp4;base64,/);
    expect(done.body.logs).toContain("100%");
    expect(await outputSeconds(done.body.output)).toBeCloseTo(3, 0);
    expect(server.stats.submits).toBe(1);
  });

  it("POST /predictions is not idempotent: each call runs the model, with a generated id unless one is given", async () => {
    const server = await cog();
    const first = await call(server, "POST", "/predictions", input());
    const second = await call(server, "POST", "/predictions", input());
    expect(first.status).toBe(200);
    expect(first.body.id).toMatch(/^pred_[0-9a-f]+$/);
    expect(second.body.id).not.toBe(first.body.id);
    const named = await call(server, "POST", "/predictions", { ...input(), id: "abcd1234" }, ASYNC);
    expect(named).toMatchObject({ status: 202, body: { id: "abcd1234", status: "starting" } });
    expect(server.stats.submits).toBe(3);
  });

  it("drops input fields the model does not declare", async () => {
    const server = await cog();
    await call(server, "PUT", "/predictions/extra", { input: { prompt: "p", seed: 7, colour: "red" } });
    expect(server.jobsFor("extra")[0]?.input).toEqual({ prompt: "p", seed: 7 });
  });

  it("describes itself at GET / and GET /openapi.json", async () => {
    const server = await cog();
    const root = await call(server, "GET", "/");
    expect(root.body).toMatchObject({
      healthcheck_url: "/health-check",
      predictions_idempotent_url: "/predictions/{prediction_id}",
      predictions_cancel_url: "/predictions/{prediction_id}/cancel",
    });
    const openapi = await call(server, "GET", "/openapi.json");
    expect(openapi.body.components.schemas.Input.required).toEqual(["prompt"]);
  });

  it("has no authentication: the token is empty and an Authorization header changes nothing", async () => {
    const server = await cog();
    expect(server.token).toBe("");
    const done = await call(server, "PUT", "/predictions/any-auth", input(), {
      authorization: "Bearer wrong",
    });
    expect(done.body.status).toBe("succeeded");
  });
});

describe("idempotent PUT", () => {
  it("a PUT of an id in flight reattaches: 202 with the current state, sync or async, whatever the input", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000 } });
    expect((await call(server, "PUT", "/predictions/same", input("first"), ASYNC)).status).toBe(202);
    await eventually(() => server.jobsFor("same")[0]?.logs.includes("0/4"));

    const sync = await call(server, "PUT", "/predictions/same", input("first"));
    expect(sync.status).toBe(202);
    expect(sync.body).toMatchObject({ id: "same", status: "processing", input: { prompt: "first" } });
    expect(sync.body.logs).toContain("0/4");
    const other = await call(server, "PUT", "/predictions/same", input("second"), ASYNC);
    expect(other).toMatchObject({ status: 202, body: { input: { prompt: "first" } } });
    expect(server.stats).toMatchObject({ submits: 1, statusCalls: 2 });
  });

  it("a retried sync PUT does not start a second prediction; the first request still gets the result", async () => {
    const server = await cog({ knobs: { latencyMs: 400 } });
    const first = call(server, "PUT", "/predictions/retry", input());
    await eventually(() => server.stats.submits === 1);
    const retry = await call(server, "PUT", "/predictions/retry", input());
    expect(retry.status).toBe(202);
    expect((await first).body.status).toBe("succeeded");
    expect(server.stats.submits).toBe(1);
  });

  it("forgets a prediction once it ended: the same PUT runs the model again", async () => {
    const server = await cog();
    expect((await call(server, "PUT", "/predictions/again", input())).body.status).toBe("succeeded");
    expect((await call(server, "PUT", "/predictions/again", input())).body.status).toBe("succeeded");
    expect(server.jobsFor("again")).toHaveLength(2);
    expect(server.stats.statusCalls).toBe(0);
  });

  it("has no GET of a prediction (405), and a body id unlike the URL's is 422", async () => {
    const server = await cog();
    const get = await call(server, "GET", "/predictions/abc");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("PUT");
    const mismatch = await call(server, "PUT", "/predictions/abc", { ...input(), id: "xyz" });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.detail[0]).toMatchObject({ loc: ["body", "id"], type: "value_error" });
    expect(server.stats.submits).toBe(0);
  });
});

describe("readiness and slots", () => {
  it.each<[CogHealth, object]>([
    ["READY", { setup: { status: "succeeded" } }],
    ["STARTING", { setup: { status: "starting" } }],
    ["SETUP_FAILED", { setup: { status: "failed", logs: expect.stringContaining("Traceback") } }],
    ["DEFUNCT", { setup: { status: "succeeded" } }],
    ["UNHEALTHY", { user_healthcheck_error: expect.any(String) }],
  ])("GET /health-check reports %s", async (health, extra) => {
    const server = await cog({ knobs: { health } });
    const answer = await call(server, "GET", "/health-check");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: health, version: { coglet: expect.any(String) }, ...extra });
  });

  it("reports BUSY while every slot is in use", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000, slots: 2 } });
    await call(server, "PUT", "/predictions/a", input(), ASYNC);
    expect((await call(server, "GET", "/health-check")).body.status).toBe("READY");
    await call(server, "PUT", "/predictions/b", input(), ASYNC);
    expect((await call(server, "GET", "/health-check")).body.status).toBe("BUSY");
    expect(server.stats.healthChecks).toBe(2);
  });

  it.each<CogHealth>(["STARTING", "SETUP_FAILED", "DEFUNCT"])(
    "refuses predictions with 503 while %s",
    async (health) => {
      const server = await cog({ knobs: { health } });
      const answer = await call(server, "PUT", "/predictions/x", input(), ASYNC);
      expect(answer).toMatchObject({ status: 503, body: { error: "Predictor not ready", status: "failed" } });
      expect(server.stats.submits).toBe(0);
    },
  );

  it("accepts predictions while UNHEALTHY (the user healthcheck does not gate predictions)", async () => {
    const server = await cog({ knobs: { health: "UNHEALTHY" } });
    expect((await call(server, "PUT", "/predictions/u", input())).body.status).toBe("succeeded");
  });

  it("setupMs: STARTING at first, READY once setup ran", async () => {
    const server = await cog({ setupMs: 100 });
    expect((await call(server, "GET", "/health-check")).body.status).toBe("STARTING");
    await eventually(async () => (await call(server, "GET", "/health-check")).body.status === "READY");
    expect((await call(server, "PUT", "/predictions/s", input())).body.status).toBe("succeeded");
  });

  it("slots: a prediction beyond them gets 409; raising them admits it", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000 } });
    expect((await call(server, "PUT", "/predictions/one", input(), ASYNC)).status).toBe(202);
    const busy = await call(server, "PUT", "/predictions/two", input(), ASYNC);
    expect(busy).toMatchObject({
      status: 409,
      body: { error: expect.stringContaining("capacity"), status: "failed" },
    });
    expect(server.stats).toMatchObject({ submits: 1, conflicts: 1 });
    server.knobs.slots = 2;
    expect((await call(server, "PUT", "/predictions/two", input(), ASYNC)).status).toBe(202);
  });
});

describe("cancel", () => {
  it("cancels a prediction still starting", async () => {
    const server = await cog({ knobs: { queueMs: 300 } });
    const hook = await receiver();
    await call(server, "PUT", "/predictions/c1", { ...input(), webhook: hook.url }, ASYNC);
    const cancelled = await call(server, "POST", "/predictions/c1/cancel");
    expect(cancelled).toMatchObject({ status: 200, body: {} });
    expect(server.jobsFor("c1")[0]).toMatchObject({
      status: "canceled",
      cancelled: true,
      cancelledIn: "starting",
    });
    const last = await eventually(() => hook.deliveries.find((d) => d.body.status === "canceled"));
    expect(last.body.id).toBe("c1");
    expect(server.stats.cancels).toBe(1);
  });

  it("cancels a prediction while the model runs; the slot is free again", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000 } });
    await call(server, "PUT", "/predictions/c2", input(), ASYNC);
    await eventually(() => server.jobsFor("c2")[0]?.status === "processing");
    expect((await call(server, "POST", "/predictions/c2/cancel")).status).toBe(200);
    expect(server.jobsFor("c2")[0]).toMatchObject({
      status: "canceled",
      cancelledIn: "processing",
      output: null,
    });
    expect((await call(server, "GET", "/health-check")).body.status).toBe("READY");
  });

  it("cancels a sync prediction: its waiting request answers 200 canceled", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000 } });
    const waiting = call(server, "PUT", "/predictions/c3", input());
    await eventually(() => server.stats.submits === 1);
    expect((await call(server, "POST", "/predictions/c3/cancel")).status).toBe(200);
    expect(await waiting).toMatchObject({ status: 200, body: { id: "c3", status: "canceled" } });
  });

  it("answers 404 for a prediction that ended or was never made", async () => {
    const server = await cog();
    await call(server, "PUT", "/predictions/c4", input());
    expect((await call(server, "POST", "/predictions/c4/cancel")).status).toBe(404);
    expect((await call(server, "POST", "/predictions/nope/cancel")).status).toBe(404);
    expect(server.stats.cancels).toBe(0);
  });

  it("cancelLatencyMs: the prediction stays in flight until the model stops", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000, cancelLatencyMs: 100 } });
    await call(server, "PUT", "/predictions/c5", input(), ASYNC);
    expect((await call(server, "POST", "/predictions/c5/cancel")).status).toBe(200);
    expect((await call(server, "PUT", "/predictions/c5", input(), ASYNC)).status).toBe(202);
    expect((await call(server, "POST", "/predictions/c5/cancel")).status).toBe(200);
    await eventually(() => server.jobsFor("c5")[0]?.status === "canceled");
    expect(server.stats.submits).toBe(1);
  });

  it.each([
    ["coglet", "canceled"],
    ["python", "succeeded"],
  ] as const)("a sync client that disconnects: %s ends the prediction %s", async (flavor, status) => {
    const server = await cog({ knobs: { flavor, latencyMs: 300 } });
    const abort = new AbortController();
    const waiting = call(server, "PUT", "/predictions/gone", input(), {}, abort.signal).catch(
      (error) => error,
    );
    await eventually(() => server.stats.submits === 1);
    abort.abort();
    expect(await waiting).toBeInstanceOf(Error);
    await eventually(() => server.jobsFor("gone")[0]?.status === status);
  });
});

describe("lost answers (loseAnswerNext)", () => {
  /** A sync PUT whose answer is expected lost: its status (0 when the connection dropped). */
  const lostPut = (server: CogServer, id: string) =>
    call(server, "PUT", `/predictions/${id}`, input()).then(
      (answer) => answer,
      () => ({ status: 0, body: null }),
    );

  it("coglet, dropped while starting: cancelled before its model ran, in flight until the cancel lands", async () => {
    const server = await cog({
      knobs: { queueMs: 50, cancelLatencyMs: 1_000, loseAnswerNext: 1, loseAnswerAs: "drop" },
    });
    expect((await lostPut(server, "l1")).status).toBe(0);
    const again = await call(server, "PUT", "/predictions/l1", input(), ASYNC);
    expect(again).toMatchObject({ status: 202, body: { status: "starting" } });
    await eventually(() => server.jobsFor("l1")[0]?.status === "canceled");
    expect(server.jobsFor("l1")).toEqual([
      expect.objectContaining({ answerLost: true, lostIn: "starting", cancelledIn: "starting", paid: false }),
    ]);
    expect(server.knobs.loseAnswerNext).toBe(0);
    expect((await call(server, "PUT", "/predictions/l1", input())).body.status).toBe("succeeded");
    expect(server.jobsFor("l1")[1]).toMatchObject({ answerLost: false, paid: true });
  });

  it("coglet, a gateway's 502 once the model runs: the gateway closes its side, so coglet cancels; paid", async () => {
    const server = await cog({
      knobs: {
        queueMs: 50,
        latencyMs: 2_000,
        loseAnswerNext: 1,
        loseAnswerAs: "502",
        loseAnswerAt: "processing",
      },
    });
    const answer = await lostPut(server, "l2");
    expect(answer).toMatchObject({ status: 502, body: expect.stringContaining("502 Bad Gateway") });
    await eventually(() => server.jobsFor("l2")[0]?.status === "canceled");
    expect(server.jobsFor("l2")[0]).toMatchObject({
      answerLost: true,
      lostIn: "processing",
      cancelledIn: "processing",
      paid: true,
    });
  });

  it.each(["drop", "502"] as const)(
    "lost at the end (%s): the prediction succeeded and is forgotten",
    async (as) => {
      const server = await cog({ knobs: { loseAnswerNext: 1, loseAnswerAs: as, loseAnswerAt: "end" } });
      expect((await lostPut(server, "l3")).status).toBe(as === "drop" ? 0 : 502);
      expect(server.jobsFor("l3")).toEqual([
        expect.objectContaining({
          status: "succeeded",
          answerLost: true,
          lostIn: "succeeded",
          cancelled: false,
          paid: true,
        }),
      ]);
      expect((await call(server, "POST", "/predictions/l3/cancel")).status).toBe(404);
    },
  );

  it("python (Cog ≤ 0.16) does not watch the client: a dropped prediction runs on to its end", async () => {
    const server = await cog({ knobs: { flavor: "python", latencyMs: 200, loseAnswerNext: 1 } });
    expect((await lostPut(server, "l4")).status).toBe(0);
    await eventually(() => server.jobsFor("l4")[0]?.status === "succeeded");
    expect(server.jobsFor("l4")[0]).toMatchObject({ answerLost: true, cancelled: false, paid: true });
  });

  it("a PUT that reattaches is not a create: it keeps its answer, the next create loses its own", async () => {
    const server = await cog({ knobs: { latencyMs: 300 } });
    expect((await call(server, "PUT", "/predictions/l5", input(), ASYNC)).status).toBe(202);
    server.knobs.loseAnswerNext = 1;
    expect((await call(server, "PUT", "/predictions/l5", input())).status).toBe(202);
    expect(server.knobs.loseAnswerNext).toBe(1);
    expect(server.jobsFor("l5")[0]).toMatchObject({ answerLost: false });
  });
});

describe("lost answers of async creates", () => {
  /** An async PUT whose answer is expected lost: its status (0 when the connection dropped). */
  const lostAsyncPut = (server: CogServer, id: string, body: object = input()) =>
    call(server, "PUT", `/predictions/${id}`, body, ASYNC).then(
      (answer) => answer,
      () => ({ status: 0, body: null }),
    );

  it.each(["coglet", "python"] as const)(
    "%s, dropped at once: the prediction runs on, a PUT of its id reattaches, its webhook has the output",
    async (flavor) => {
      const server = await cog({
        knobs: { flavor, queueMs: 50, latencyMs: 300, loseAnswerNext: 1, loseAnswerAs: "drop" },
      });
      const hook = await receiver();
      const body = { ...input(), webhook: hook.url, webhook_events_filter: ["start", "completed"] };
      expect((await lostAsyncPut(server, "a1", body)).status).toBe(0);
      const again = await call(server, "PUT", "/predictions/a1", body, ASYNC);
      expect(again.status).toBe(202);
      await eventually(() => hook.deliveries.find((d) => d.body.status === "succeeded"));
      expect(server.jobsFor("a1")).toEqual([
        expect.objectContaining({ async: true, answerLost: true, status: "succeeded", paid: true }),
      ]);
      expect(server.stats.submits).toBe(1);
      expect(hook.deliveries.map((d) => d.body.status)).toEqual(["processing", "succeeded"]);
    },
  );

  it.each<["processing" | "end", "drop" | "502", string]>([
    ["processing", "502", "processing"],
    ["end", "drop", "succeeded"],
  ])(
    "held until %s, then lost (%s): the prediction was never tied to its request",
    async (at, as, lostIn) => {
      const server = await cog({
        knobs: { queueMs: 50, latencyMs: 200, loseAnswerNext: 1, loseAnswerAs: as, loseAnswerAt: at },
      });
      const hook = await receiver();
      const body = { ...input(), webhook: hook.url, webhook_events_filter: ["completed"] };
      expect((await lostAsyncPut(server, "a2", body)).status).toBe(as === "drop" ? 0 : 502);
      await eventually(() => hook.deliveries[0]);
      expect(server.jobsFor("a2")).toEqual([
        expect.objectContaining({
          answerLost: true,
          lostIn,
          status: "succeeded",
          cancelled: false,
          paid: true,
        }),
      ]);
      expect(hook.deliveries[0]?.body).toMatchObject({ id: "a2", status: "succeeded" });
    },
  );
});

describe("failures and faults", () => {
  it("failNext: the model raises; sync answers 200 failed, webhooks carry the traceback", async () => {
    const server = await cog({ knobs: { failNext: 2, failMessage: "out of memory" } });
    const sync = await call(server, "PUT", "/predictions/f1", input());
    expect(sync).toMatchObject({ status: 200, body: { id: "f1", status: "failed", error: "out of memory" } });
    const hook = await receiver();
    await call(server, "PUT", "/predictions/f2", { ...input(), webhook: hook.url }, ASYNC);
    const failed = await eventually(() => hook.deliveries.find((d) => d.body.status === "failed"));
    expect(failed.body.error).toBe("out of memory");
    expect(failed.body.logs).toContain("Traceback (most recent call last)");
    expect((await call(server, "PUT", "/predictions/f3", input())).body.status).toBe("succeeded");
    expect(server.jobsFor("f2")[0]?.status).toBe("failed");
  });

  it("answers 422 naming the field for invalid input, and runs nothing", async () => {
    const server = await cog();
    const missing = await call(server, "PUT", "/predictions/v1", { input: { seed: 1 } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([
      { loc: ["body", "input", "prompt"], msg: "Field required", type: "value_error.missing" },
    ]);
    const mistyped = await call(server, "PUT", "/predictions/v1", { input: { prompt: 5 } });
    expect(mistyped.body.detail[0]).toMatchObject({ loc: ["body", "input", "prompt"], type: "value_error" });
    const filter = await call(server, "PUT", "/predictions/v1", {
      ...input(),
      webhook_events_filter: ["done"],
    });
    expect(filter.status).toBe(422);
    expect(server.stats.submits).toBe(0);
  });

  it("rateLimitNext answers 429 with Retry-After for the chosen kind", async () => {
    const server = await cog({
      knobs: { latencyMs: 2_000, rateLimitNext: { submit: 1, status: 1 }, retryAfterSeconds: 2 },
    });
    const limited = await call(server, "PUT", "/predictions/r1", input(), ASYNC);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect((await call(server, "PUT", "/predictions/r1", input(), ASYNC)).status).toBe(202);
    expect((await call(server, "PUT", "/predictions/r1", input(), ASYNC)).status).toBe(429);
    expect((await call(server, "PUT", "/predictions/r1", input(), ASYNC)).status).toBe(202);
    expect(server.stats.submits).toBe(1);
  });

  it("serverErrorNext answers 5xx for the chosen kind", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000, serverErrorNext: { submit: 1, cancel: 1 } } });
    const failed = await call(server, "PUT", "/predictions/e1", input(), ASYNC);
    expect(failed).toMatchObject({ status: 500, body: "Internal Server Error" });
    expect((await call(server, "PUT", "/predictions/e1", input(), ASYNC)).status).toBe(202);
    expect((await call(server, "POST", "/predictions/e1/cancel")).status).toBe(500);
    server.knobs.serverErrorStatus = 503;
    server.knobs.serverErrorNext.cancel = 1;
    expect((await call(server, "POST", "/predictions/e1/cancel")).status).toBe(503);
    expect((await call(server, "POST", "/predictions/e1/cancel")).status).toBe(200);
  });

  it("hangStatus and hangHealth: no answer until cleared", async () => {
    const server = await cog({ knobs: { latencyMs: 2_000, hangStatus: true, hangHealth: true } });
    await call(server, "PUT", "/predictions/h1", input(), ASYNC);
    const timedOut = call(server, "PUT", "/predictions/h1", input(), ASYNC, AbortSignal.timeout(100));
    await expect(timedOut).rejects.toThrow();
    await expect(
      call(server, "GET", "/health-check", undefined, {}, AbortSignal.timeout(50)),
    ).rejects.toThrow();
    const waiting = call(server, "PUT", "/predictions/h1", input(), ASYNC);
    const health = call(server, "GET", "/health-check");
    await eventually(() => server.stats.statusCalls === 2 && server.stats.healthChecks === 2);
    server.knobs.hangStatus = false;
    server.knobs.hangHealth = false;
    expect((await waiting).status).toBe(202);
    expect((await health).body.status).toBe("BUSY");
  });

  it.each(["url", "data"] as const)(
    "malformedOutput (%s): the output claims to be an MP4 but is not",
    async (outputAs) => {
      const server = await cog({ knobs: { outputAs, malformedOutput: true } });
      const done = await call(server, "PUT", "/predictions/m1", input());
      expect(done.body.status).toBe("succeeded");
      const bytes = await outputBytes(done.body.output);
      expect(bytes.subarray(4, 8).toString("latin1")).not.toBe("ftyp");
      const file = join(dir, `${randomUUID()}.mp4`);
      await writeFile(file, bytes);
      await expect(probeDuration(file, { timeoutMs: 15_000 })).rejects.toThrow();
    },
  );

  it("webhook_events_filter limits the events; a failed terminal webhook is retried", async () => {
    const server = await cog({ knobs: { webhookIntervalMs: 0, webhookRetryBaseMs: 5 } });
    const hook = await receiver([500]);
    const body = { ...input(), webhook: hook.url, webhook_events_filter: ["completed"] };
    await call(server, "PUT", "/predictions/w1", body, ASYNC);
    await eventually(() => server.stats.webhooks[1]?.answer);
    expect(hook.deliveries.map((d) => d.body.status)).toEqual(["succeeded", "succeeded"]);
    await expect
      .poll(() => server.stats.webhooks.map((w) => [w.event, w.attempt, w.answer]), { timeout: 10_000 })
      .toEqual([
        ["completed", 1, 500],
        ["completed", 2, 200],
      ]);
  });

  it("webhookDropNext: a dropped terminal webhook is retried, a dropped start is gone", async () => {
    const server = await cog({
      knobs: { webhookRetryBaseMs: 5, webhookDropNext: { start: 1, completed: 2 } },
    });
    const hook = await receiver();
    const body = { ...input(), webhook: hook.url, webhook_events_filter: ["start", "completed"] };
    await call(server, "PUT", "/predictions/w2", body, ASYNC);
    await eventually(() => hook.deliveries[0]);
    expect(hook.deliveries.map((d) => d.body.status)).toEqual(["succeeded"]);
    // The server records an attempt's answer once the receiver's answer is back, after the receipt.
    await expect
      .poll(() => server.stats.webhooks.map((w) => [w.event, w.attempt, w.answer]), { timeout: 10_000 })
      .toEqual([
        ["start", 1, "error"],
        ["completed", 1, "error"],
        ["completed", 2, "error"],
        ["completed", 3, 200],
      ]);
  });

  it("refuses a streamed response (406): the model does not declare streaming output", async () => {
    const server = await cog();
    const answer = await call(server, "PUT", "/predictions/sse", input(), { accept: "text/event-stream" });
    expect(answer.status).toBe(406);
    expect(server.stats.submits).toBe(0);
  });
});

describe("python flavor (Cog ≤ 0.16)", () => {
  it("answers the full prediction: 202 processing, 200 with timestamps, reattach with the state", async () => {
    const server = await cog({ knobs: { flavor: "python", latencyMs: 300 } });
    const created = await call(server, "PUT", "/predictions/p1", input(), ASYNC);
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({
      id: "p1",
      status: "processing",
      input: { prompt: "a slow dolly shot" },
      output: null,
      error: null,
      logs: "",
      completed_at: null,
      started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/),
    });
    expect((await call(server, "PUT", "/predictions/p1", input())).body).toMatchObject({
      id: "p1",
      status: "processing",
    });
    const sync = await call(server, "PUT", "/predictions/p2", input());
    expect(sync.status).toBe(409);
    expect(sync.body).toEqual({ detail: "Already running a prediction" });
    await eventually(() => server.jobsFor("p1")[0]?.status === "succeeded");
    const done = await call(server, "PUT", "/predictions/p2", input());
    expect(done.body).toMatchObject({
      status: "succeeded",
      completed_at: expect.any(String),
      metrics: { predict_time: expect.any(Number) },
    });
    expect(await outputSeconds(done.body.output)).toBeCloseTo(2, 0);
  });

  it("validates before reattaching; an id-less POST answers id null", async () => {
    const server = await cog({ knobs: { flavor: "python", latencyMs: 2_000 } });
    await call(server, "PUT", "/predictions/p3", input(), ASYNC);
    expect((await call(server, "PUT", "/predictions/p3", { input: {} })).status).toBe(422);
    expect((await call(server, "PUT", "/predictions/p3")).status).toBe(422);
    server.knobs.slots = 2;
    const anonymous = await call(server, "POST", "/predictions", input(), ASYNC);
    expect(anonymous.body.id).toBeNull();
    expect(server.stats.submits).toBe(2);
  });

  it("STARTING is 409, SETUP_FAILED a bare 500; health-check has no version", async () => {
    const server = await cog({ knobs: { flavor: "python", health: "STARTING" } });
    expect((await call(server, "GET", "/health-check")).body).toEqual({ status: "STARTING", setup: {} });
    expect((await call(server, "PUT", "/predictions/p4", input())).status).toBe(409);
    server.knobs.health = "SETUP_FAILED";
    expect(await call(server, "PUT", "/predictions/p4", input())).toMatchObject({
      status: 500,
      body: "Internal Server Error",
    });
    expect((await call(server, "GET", "/health-check")).body).toMatchObject({
      status: "SETUP_FAILED",
      setup: { status: "failed" },
    });
    expect(server.stats.submits).toBe(0);
  });
});

describe("Cog 0.12 (python-0.12): a held sync prediction blocks the server until it ends", () => {
  /** Resolves with the answer, noting in `order` when it came. */
  const noting = (order: string[], name: string, answer: Promise<Answer>) =>
    answer.then((a) => {
      order.push(name);
      return a;
    });

  it("a cancel is answered only once the prediction ran to its end: 404, never cancelled", async () => {
    const server = await cog({ knobs: { flavor: "python-0.12", latencyMs: 60_000 } });
    const order: string[] = [];
    const held = noting(order, "held", call(server, "PUT", "/predictions/h1", input()));
    await eventually(() => server.jobsFor("h1")[0]);
    const cancel = noting(order, "cancel", call(server, "POST", "/predictions/h1/cancel"));
    const health = noting(order, "health", call(server, "GET", "/health-check"));
    // Nothing is served while the model runs; the test ends it rather than waiting a minute.
    await eventually(() => server.stats.waiting.length === 2);
    expect(server.stats.requests).toEqual([]);
    server.finishNow("h1");
    expect((await held).body).toMatchObject({ id: "h1", status: "succeeded" });
    expect(await cancel).toMatchObject({ status: 404, body: {} });
    expect((await health).body).toMatchObject({ status: "READY" });
    expect(order).toEqual(["held", "cancel", "health"]);
    expect(server.jobsFor("h1")[0]).toMatchObject({ status: "succeeded", cancelled: false });
    expect(server.stats.cancels).toBe(0);
  });

  it("another prediction waits for the first (no 409) and a PUT of the held id runs the model again", async () => {
    const server = await cog({ knobs: { flavor: "python-0.12", latencyMs: 60_000 } });
    const order: string[] = [];
    const first = noting(order, "first", call(server, "PUT", "/predictions/h2", input("first")));
    await eventually(() => server.jobsFor("h2")[0]);
    const other = noting(order, "other", call(server, "PUT", "/predictions/h3", input("other")));
    const again = noting(order, "again", call(server, "PUT", "/predictions/h2", input("again")));
    // A client that leaves while the server is blocked is never served.
    const leave = new AbortController();
    const leaving = call(server, "PUT", "/predictions/h4", input(), {}, leave.signal);
    await eventually(() => server.stats.waiting.length === 3);
    leave.abort();
    await expect(leaving).rejects.toThrow();
    server.finishNow("h2");
    expect((await first).body).toMatchObject({ status: "succeeded", input: { prompt: "first" } });
    // Each next one blocks the server in turn.
    await eventually(() => server.jobsFor("h3")[0]);
    server.finishNow("h3");
    await eventually(() => server.jobsFor("h2")[1]);
    server.finishNow("h2");
    expect((await other).status).toBe(200);
    expect((await again).body).toMatchObject({ status: "succeeded", input: { prompt: "again" } });
    expect(order).toEqual(["first", "other", "again"]);
    expect(server.jobsFor("h2")).toHaveLength(2);
    expect(server.jobsFor("h4")).toHaveLength(0);
    expect(server.stats).toMatchObject({ submits: 3, conflicts: 0, maxRunning: 1, unserved: 1 });
  });

  it("an async prediction leaves the server free: 409 for another, 202 for its id, 200 for its cancel", async () => {
    const server = await cog({ knobs: { flavor: "python-0.12", latencyMs: 60_000 } });
    expect((await call(server, "PUT", "/predictions/a1", input(), ASYNC)).status).toBe(202);
    expect((await call(server, "GET", "/health-check")).body).toMatchObject({ status: "BUSY" });
    expect(await call(server, "PUT", "/predictions/a2", input())).toMatchObject({
      status: 409,
      body: { detail: "Already running a prediction" },
    });
    expect((await call(server, "PUT", "/predictions/a1", input())).status).toBe(202);
    expect((await call(server, "POST", "/predictions/a1/cancel")).status).toBe(200);
    await eventually(() => server.jobsFor("a1")[0]?.status === "canceled");
    expect(server.stats).toMatchObject({ submits: 1, maxRunning: 1 });
  });
});

describe("an input the model's published schema refuses", () => {
  /** A Replicate model is a Cog model: its published Input is the container's. */
  const schema = vendorInputSchema("replicate", "bytedance/seedance-2.0");
  const images = (n: number) => Array.from({ length: n }, (_, i) => `https://x/${i}.png`);
  const at = (field: string) => ["body", "input", field];

  it("a valid input runs; /openapi.json serves the schema as the model's Input", async () => {
    const server = await cog({ inputSchema: schema });
    const sync = await call(server, "PUT", "/predictions/ok", { input: { prompt: "p", duration: 15 } });
    expect(sync.body.status).toBe("succeeded");
    const openapi = await call(server, "GET", "/openapi.json");
    expect(openapi.body.components.schemas.Input.properties).toEqual(schema.properties);
  });

  it.each<[string, CogServerOptions["inputSchema"], Record<string, unknown>, unknown[]]>([
    [
      "a duration past 15",
      schema,
      { prompt: "p", duration: 20 },
      [{ loc: at("duration"), msg: "20 is greater than the maximum of 15", type: "value_error" }],
    ],
    [
      "no prompt, a duration of the wrong type and a field the model does not take",
      schema,
      { duration: "5", image_urls: [] },
      [
        { loc: at("prompt"), msg: "Field required", type: "value_error.missing" },
        { loc: at("image_urls"), msg: "Unexpected field 'image_urls'", type: "value_error.extra" },
        { loc: at("duration"), msg: '"5" is not of type "integer"', type: "value_error" },
      ],
    ],
    [
      "ten reference images where 9 is the most",
      vendorInputSchema("fal", "bytedance/seedance-2.0/reference-to-video"),
      { prompt: "p", image_urls: images(10) },
      [
        {
          loc: at("image_urls"),
          msg: `${JSON.stringify(images(10))} has more than 9 items`,
          type: "value_error",
        },
      ],
    ],
  ])("%s: 422 with pydantic's detail, and nothing runs", async (_, inputSchema, given, detail) => {
    for (const flavor of ["coglet", "python"] as const) {
      const server = await cog({ inputSchema, knobs: { flavor } });
      const refused = await call(server, "PUT", "/predictions/bad", { input: given });
      expect(refused).toMatchObject({ status: 422, body: { detail: expect.arrayContaining(detail) } });
      expect(refused.body.detail).toHaveLength(detail.length);
      expect(server.stats.submits).toBe(0);
      expect(server.stats.requests).toEqual([
        { method: "PUT", path: "/predictions/bad", kind: "submit", status: 422, body: { input: given } },
      ]);
    }
  });
});
