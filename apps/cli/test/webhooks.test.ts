/** `refvid webhooks secret|deliveries|redeliver|listen`, with real deliveries from the server. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "@refvid/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Account, cli, IMAGE, newAccount, start } from "./cli.js";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The app that `listen` forwards to: keeps each request, answers 202. */
let app: Server;
let appUrl: string;
const received: Received[] = [];
let nextArrival: (() => void) | undefined;

let account: Account;
let secret: string;

beforeAll(async () => {
  account = await newAccount();
  app = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(202, { "content-type": "text/plain" }).end("thanks");
      nextArrival?.();
    });
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks/refvid`;
  secret = JSON.parse((await cli(["webhooks", "secret", "--json"], { env: account.env })).stdout).secret;
});

afterAll(async () => {
  await new Promise((resolve) => app.close(resolve));
});

const arrival = () =>
  new Promise<void>((resolve) => {
    nextArrival = resolve;
  });

describe("refvid run --webhook-events", () => {
  it("subscribes the webhook to the run's start as well as its end", async () => {
    const from = received.length;
    const run = await cli(
      [
        "run",
        "model-d",
        "--prompt",
        "p",
        "--image",
        IMAGE,
        "--webhook-url",
        appUrl,
        "--webhook-events",
        "started,completed",
        "--yes",
        "--json",
      ],
      { env: account.env },
    );
    const runId = JSON.parse(run.stdout).run_id;
    const types = await vi.waitFor(
      () => {
        const mine = received
          .slice(from)
          .map((r) => JSON.parse(r.body) as { type: string; data: { run_id: string } })
          .filter((e) => e.data.run_id === runId)
          .map((e) => e.type);
        expect(mine).toContain("run.succeeded");
        return mine;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(types).toEqual(["run.started", "run.succeeded"]);
  });
});

describe("refvid webhooks", () => {
  it("secret prints the signing secret of the key's environment, and names it", async () => {
    const result = await cli(["webhooks", "secret"], { env: account.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${secret}\n`);
    expect(secret).toMatch(/^whsec_/);
    // The suite's key is a test key: its secret signs test runs only; a live key reads another.
    expect(result.stderr).toContain("The test secret: it signs the webhooks of test runs only.");
    const live = await newAccount({ environment: "live" });
    const liveSecret = JSON.parse((await cli(["webhooks", "secret", "--json"], { env: live.env })).stdout);
    expect(liveSecret).toEqual({ environment: "live", secret: expect.stringMatching(/^whsec_/) });
  });

  it("listen receives a real delivery, verifies it, forwards it to the app, and refvid logs the app's answer", async () => {
    const listener = start(["webhooks", "listen", "--forward-to", appUrl], { env: account.env });
    await listener.waitFor("Forwarding verified deliveries");
    expect(listener.stdout()).toContain("Verifying with the test secret: runs made with test keys verify");
    const webhookUrl = /Webhook URL: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(listener.stdout())?.[1] as string;
    expect(webhookUrl).toBeDefined();

    const arrived = arrival();
    const run = await cli(
      ["run", "model-d", "--prompt", "p", "--image", IMAGE, "--webhook-url", webhookUrl, "--yes", "--json"],
      {
        env: account.env,
      },
    );
    const runId = JSON.parse(run.stdout).run_id;
    await arrived;
    await listener.waitFor(runId);

    // The app got the raw body and the signature headers, and the signature is refvid's.
    const forwarded = received.at(-1) as Received;
    expect(forwarded.path).toBe("/hooks/refvid");
    const event = await verifyWebhook(forwarded.body, forwarded.headers, secret);
    expect(event).toMatchObject({ type: "run.succeeded", data: { run_id: runId, status: "succeeded" } });
    expect(forwarded.headers["webhook-id"]).toMatch(/^msg_/);

    await listener.waitFor("→ 202");
    expect(listener.stdout()).toMatch(
      new RegExp(`run\\.succeeded  ${runId}  succeeded  signature ok  → 202 \\(\\d+ ms\\)  msg_`),
    );

    // refvid saw the app's 202 through the listener; redelivering sends the same event again.
    // The listener has answered refvid; refvid records the attempt once it has read that answer.
    const delivery = await vi.waitFor(
      async () => {
        const log = await cli(["webhooks", "deliveries", "--run", runId, "--json"], { env: account.env });
        const [found] = JSON.parse(log.stdout) as {
          id: string;
          state: string;
          attempts: { status: number }[];
        }[];
        expect(found?.state).toBe("delivered");
        return found as NonNullable<typeof found>;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(delivery).toMatchObject({ run_id: runId, state: "delivered", event_type: "run.succeeded" });
    expect(delivery.attempts.at(-1)?.status).toBe(202);

    const again = arrival();
    const redeliver = await cli(["webhooks", "redeliver", delivery.id], { env: account.env });
    expect(redeliver.code).toBe(0);
    expect(redeliver.stdout).toContain(`Queued another attempt of ${delivery.id}.`);
    await again;
    expect((received.at(-1) as Received).headers["webhook-id"]).toBe(delivery.id);

    const stopped = await listener.stop();
    expect(stopped.code).toBe(0);
  });

  it("listen --json prints one JSON object per line, and refuses a forged delivery without forwarding it", async () => {
    const listener = start(["webhooks", "listen", "--forward-to", appUrl, "--json"], { env: account.env });
    await listener.waitFor('"ready":true');
    const ready = JSON.parse(listener.stdout().split("\n")[0] as string);
    expect(ready).toMatchObject({ ready: true, environment: "test" });
    const before = received.length;

    const forged = await fetch(ready.webhook_url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": "msg_forged",
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "webhook-signature": "v1,bm90IGEgc2lnbmF0dXJl",
      },
      body: JSON.stringify({ type: "run.succeeded", data: { run_id: "run_forged", status: "succeeded" } }),
    });
    expect(forged.status).toBe(400);
    await listener.waitFor("msg_forged");
    const line = JSON.parse(listener.stdout().split("\n")[1] as string);
    expect(line).toMatchObject({
      webhook_id: "msg_forged",
      run_id: "run_forged",
      signature: "invalid",
      forward: null,
    });
    expect(received.length).toBe(before);
    await listener.stop();
  });

  it("listen needs --forward-to (exit 2)", async () => {
    const result = await cli(["webhooks", "listen"], { env: account.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("required option '--forward-to <url>' not specified");
  });

  it("deliveries lists the log with filters, for people", async () => {
    const table = await cli(["webhooks", "deliveries", "--state", "delivered"], { env: account.env });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/DELIVERY\s+│ RUN\s+│ EVENT/);
    expect(table.stdout).toMatch(/│ run\.succeeded │ delivered │/);
    const none = await cli(["webhooks", "deliveries", "--state", "failed", "--json"], { env: account.env });
    expect(JSON.parse(none.stdout)).toEqual([]);
    const bad = await cli(["webhooks", "redeliver", "msg_nope"], { env: account.env });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain("HTTP 404");
  });
});
