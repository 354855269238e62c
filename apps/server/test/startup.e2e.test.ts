/**
 * Start-up of the real process (the built `dist/main.js`): set-ups that cannot work stop it with
 * a message naming what to change, risky ones are warned about, one PGlite directory serves one
 * process at a time, and an occupied port is reported as such.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "./processes.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const ADMIN_TOKEN = randomBytes(24).toString("hex");

interface Launched {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  /** Resolves when the process serves /readyz ("ready") or exits (its exit code), whichever is first. */
  settled: Promise<"ready" | { code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let dir: string;
const launched: Launched[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-startup-"));
});
afterEach(async () => {
  await Promise.all(
    launched.splice(0).map(async (p) => {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await p.exited;
    }),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function launch(env: Record<string, string>, args: string[] = []): Promise<Launched> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "warn",
      REFVID_PROVIDER: "simulated",
      REFVID_DATA_DIR: join(dir, `data-${port}`),
      REFVID_SIGNING_SECRET: randomBytes(32).toString("hex"),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const chunks: string[] = [];
  child.stdout?.on("data", (c: Buffer) => chunks.push(c.toString()));
  child.stderr?.on("data", (c: Buffer) => chunks.push(c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const ready = (async () => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (
        await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return "ready" as const;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return await exited;
  })();
  const p: Launched = {
    child,
    port,
    url,
    output: () => chunks.join(""),
    settled: Promise.race([ready, exited]),
    exited,
  };
  launched.push(p);
  return p;
}

/** Waits for the process to settle and expects it to have exited with `code`. */
async function expectExit(p: Launched, code: number) {
  const settled = await p.settled;
  expect(settled, p.output()).toEqual({ code, signal: null });
  return p.output();
}

async function expectReady(p: Launched) {
  expect(await p.settled, p.output()).toBe("ready");
}

const production = {
  NODE_ENV: "production",
  REFVID_STORE: "memory",
  REFVID_PUBLIC_URL: "https://videos.example.com",
};

describe("start-up in production", () => {
  it.each(["all", "api"])(
    "refuses to start an API process (role %s) without REFVID_ADMIN_TOKEN",
    async (role) => {
      const output = await expectExit(await launch(production, ["--role", role]), 2);
      expect(output).toMatch(/REFVID_ADMIN_TOKEN/);
      expect(output).not.toMatch(/at .*\.js:\d+/); // a message, not a stack trace
    },
  );

  it("starts a worker without REFVID_ADMIN_TOKEN, and its banner says nothing of the admin API", async () => {
    const p = await launch(production, ["--role", "worker"]);
    await expectReady(p);
    expect(p.output()).toMatch(/refvid worker started/);
    expect(p.output()).not.toMatch(/admin API/);
  });

  it.each([
    ["unset (http://localhost:PORT)", undefined],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["https://localhost", "https://localhost"],
    ["http://[::1]:8080", "http://[::1]:8080"],
  ])("refuses a loopback REFVID_PUBLIC_URL: %s", async (_, publicUrl) => {
    const env: Record<string, string> = { ...production, REFVID_ADMIN_TOKEN: ADMIN_TOKEN };
    if (publicUrl) env.REFVID_PUBLIC_URL = publicUrl;
    else delete env.REFVID_PUBLIC_URL;
    const output = await expectExit(await launch(env), 2);
    expect(output).toMatch(/REFVID_PUBLIC_URL/);
    expect(output).toMatch(/loopback|localhost/);
  });

  it("warns, in the log and on the console, about the embedded store and a plain-http public URL", async () => {
    const p = await launch({
      ...production,
      REFVID_ADMIN_TOKEN: ADMIN_TOKEN,
      REFVID_STORE: `pglite:${join(dir, "production-pglite")}`,
      REFVID_PUBLIC_URL: "http://videos.example.com",
    });
    await expectReady(p);
    const output = p.output();
    expect(output).toMatch(/warning: embedded store .*one process only, no scale-out; set DATABASE_URL/);
    expect(output).toMatch(/warning: REFVID_PUBLIC_URL .*https/);
    const logged = output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(logged.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/embedded store/),
        expect.stringMatching(/REFVID_PUBLIC_URL/),
      ]),
    );
  });

  it("still applies migrations without an admin token", async () => {
    const p = await launch({ NODE_ENV: "production", REFVID_STORE: `pglite:${join(dir, "migrate-only")}` }, [
      "migrate",
    ]);
    expect(await p.exited, p.output()).toEqual({ code: 0, signal: null });
    expect(p.output()).toMatch(/migrations applied/);
  });
});

describe("the catalog file", () => {
  /** A catalog with one model whose only route costs `cost` a second where the price is 0.10. */
  const catalog = async (name: string, cost: string, extra = "") => {
    const file = join(dir, name);
    await writeFile(
      file,
      [
        "providers:",
        "  box: { type: cog, url: http://127.0.0.1:9 }",
        "models:",
        "  acme/clip/text-to-video:",
        "    name: Clip",
        "    summary: Text to video.",
        "    input_schema: { type: object, required: [prompt], properties: { prompt: { type: string } } }",
        "    fields: { prompt: prompt }",
        "    max_duration_seconds: 5",
        '    pricing: [{ usd_per_second: "0.10" }]',
        `    routes: [{ provider: box, cost: { usd_per_second: "${cost}" }${extra} }]`,
        "",
      ].join("\n"),
    );
    return file;
  };

  it("stops a production server whose route costs more than its price, naming both", async () => {
    const file = await catalog("losing.yaml", "0.25");
    const output = await expectExit(
      await launch({ ...production, REFVID_ADMIN_TOKEN: ADMIN_TOKEN, REFVID_CATALOG_FILE: file }),
      2,
    );
    expect(output).toMatch(
      /acme\/clip\/text-to-video route box costs 0\.25 USD\/s where the price \(every input\) is 0\.10 USD\/s/,
    );
    expect(output).toMatch(/allow_loss: true/);
    expect(output).not.toMatch(/at .*\.js:\d+/);
  });

  it("serves it with allow_loss: true, and warns of it outside production", async () => {
    const allowed = await launch({
      ...production,
      REFVID_ADMIN_TOKEN: ADMIN_TOKEN,
      REFVID_CATALOG_FILE: await catalog("allowed.yaml", "0.25", ", allow_loss: true"),
    });
    await expectReady(allowed);
    const warned = await launch({
      REFVID_STORE: "memory",
      REFVID_CATALOG_FILE: await catalog("warned.yaml", "0.25"),
    });
    await expectReady(warned);
    expect(warned.output()).toMatch(/a route loses money: acme\/clip\/text-to-video route box costs 0\.25/);
  });

  it("reads the file again on SIGHUP, and keeps the catalog in service when the new one is bad", async () => {
    const file = await catalog("reloaded.yaml", "0.05");
    const p = await launch({ REFVID_STORE: "memory", REFVID_CATALOG_FILE: file, LOG_LEVEL: "info" });
    await expectReady(p);
    const logged = (msg: string) =>
      p
        .output()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { msg: string; models?: string[]; err?: string })
        .filter((line) => line.msg === msg);
    await writeFile(file, (await readFile(file, "utf8")).replace("acme/clip/", "acme/clip-2/"));
    p.child.kill("SIGHUP");
    await eventually(() => logged("catalog reloaded").length > 0);
    expect(logged("catalog reloaded")[0]?.models).toContain("acme/clip-2/text-to-video");
    await writeFile(file, "models: [");
    p.child.kill("SIGHUP");
    await eventually(() => logged("catalog reload refused; the catalog in service stays").length > 0);
    expect(logged("catalog reload refused; the catalog in service stays")[0]?.err).toMatch(
      /is not valid YAML/,
    );
    expect(p.child.exitCode).toBeNull();
  });
});

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("one PGlite directory, one process", () => {
  it("refuses a second process on the directory, and takes over the lock of a killed one", async () => {
    const data = join(dir, "shared-pglite");
    const env = {
      REFVID_STORE: `pglite:${data}`,
      REFVID_ADMIN_TOKEN: ADMIN_TOKEN,
      REFVID_SEED_DEMO: "false",
    };
    const admin = (p: Launched, method: string, path: string, body?: unknown) =>
      fetch(`${p.url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

    const first = await launch(env);
    await expectReady(first);
    const org = await admin(first, "POST", "/organizations", { name: "first" });
    expect(org.status).toBe(201);

    const second = await launch(env);
    const output = await expectExit(second, 1);
    expect(output).toContain(data);
    expect(output).toContain(`pid ${first.child.pid}`);
    expect(output).not.toMatch(/at .*\.js:\d+/);

    // The first keeps serving from its store.
    expect((await admin(first, "GET", `/organizations/${org.body.organization_id}`)).status).toBe(200);
    expect((await admin(first, "POST", "/organizations", { name: "still first" })).status).toBe(201);

    // A killed holder leaves its lock behind; the next process takes it over.
    first.child.kill("SIGKILL");
    await first.exited;
    expect(existsSync(join(data, "refvid.lock"))).toBe(true);
    const third = await launch(env);
    await expectReady(third);
    expect((await admin(third, "GET", `/organizations/${org.body.organization_id}`)).body).toMatchObject({
      name: "first",
    });
    expect(JSON.parse(await readFile(join(data, "refvid.lock"), "utf8"))).toMatchObject({
      pid: third.child.pid,
    });

    // A graceful stop releases it.
    third.child.kill("SIGTERM");
    expect(await third.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(join(data, "refvid.lock"))).toBe(false);
  }, 90_000);
});

describe("an occupied port", () => {
  let holder: Server;
  afterEach(async () => {
    if (holder?.listening) await new Promise((resolve) => holder.close(resolve));
  });

  it("stops with a message naming the port and PORT", async () => {
    holder = createServer((_req, res) => res.writeHead(503).end("someone else"));
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as AddressInfo;
    const output = await expectExit(await launch({ PORT: String(port), REFVID_STORE: "memory" }), 1);
    expect(output).toMatch(new RegExp(`port ${port} .*in use`));
    expect(output).toMatch(/PORT/);
    expect(output).not.toMatch(/TypeError/);
  });
});

describe("the banner", () => {
  it("points the demo's curl at this server's port and the sample server's SAMPLES_PORT", async () => {
    const p = await launch({ REFVID_STORE: "memory", SAMPLES_PORT: "9123" });
    await expectReady(p);
    // Printed once the demo is seeded, which may come just after /readyz answers.
    const deadline = Date.now() + 30_000;
    while (!p.output().includes("sculpture.png") && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const output = p.output();
    expect(output).toContain(`refvid is serving on http://localhost:${p.port} (role: all)`);
    expect(output).toContain(
      `curl -s -X POST http://localhost:${p.port}/v1/run/lab-d/model-d/reference-to-video`,
    );
    expect(output).toContain('"image_urls": ["http://localhost:9123/sculpture.png"]');
    expect(output).toContain("serve them first: SAMPLES_PORT=9123 npm run serve:samples");
    expect(output).not.toContain("localhost:9001");
  });
});
