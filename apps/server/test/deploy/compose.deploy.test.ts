/**
 * deploy/compose.yaml as an operator starts it, with local stand-ins for the images this machine
 * cannot pull (scripts/deploy/standins): Caddy terminates TLS in front of two API processes, two
 * workers share Postgres and the object store, and `migrate` runs once before the API. A run goes
 * through the proxy to a real MP4 in the bucket, and the proxy keeps answering with one API
 * process stopped.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeDuration } from "../../src/media/ffmpeg.js";
import { eventually } from "../harness.js";
import { freePort } from "../processes.js";
import { docker, imageUnderTest } from "./docker.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const COMPOSE = join(ROOT, "deploy/compose.yaml");
const STANDINS = join(ROOT, "scripts/deploy/standins/compose.standins.yaml");
const SCULPTURE = join(ROOT, "docs/examples/refs/sculpture.png");
const MODEL = "lab-a/model-a/reference-to-video";
const DOMAIN = "refvid.test";

let work: string;
let project: string;
let env: Record<string, string>;
let ca: string;

const execFileAsync = promisify(execFile);
async function compose(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await execFileAsync(
      "docker-compose",
      ["--env-file", join(work, ".env"), "-f", COMPOSE, "-f", STANDINS, ...args],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`docker-compose ${args.join(" ")}: ${e.stderr || e.stdout || e.message}`);
  }
}

/** A request to the stack through Caddy, over TLS checked against Caddy's own root certificate. */
function https(
  method: string,
  path: string,
  options: { auth?: string; body?: unknown; raw?: Buffer; type?: string } = {},
) {
  return new Promise<{ status: number; body: Buffer; json: () => any }>((resolve, reject) => {
    const payload =
      options.raw ?? (options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body)));
    const req = request(
      {
        host: DOMAIN,
        port: Number(env.HTTPS_PORT),
        path,
        method,
        ca,
        // The stack's name resolves to this machine, as a DNS record would point at the host.
        lookup: (_host, opts, callback) =>
          (opts as { all?: boolean }).all
            ? callback(null, [{ address: "127.0.0.1", family: 4 }] as never)
            : callback(null, "127.0.0.1", 4),
        headers: {
          ...(options.auth ? { authorization: options.auth } : {}),
          ...(payload
            ? { "content-type": options.type ?? "application/json", "content-length": payload.length }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, body, json: () => JSON.parse(body.toString("utf8")) });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

beforeAll(async () => {
  imageUnderTest();
  work = await mkdtemp(join(tmpdir(), "refvid-compose-"));
  project = `refvidtest${randomBytes(3).toString("hex")}`;
  const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
  env = {
    COMPOSE_PROJECT_NAME: project,
    REFVID_DOMAIN: DOMAIN,
    REFVID_PUBLIC_URL: `https://${DOMAIN}:${ports[1]}`,
    TLS: "internal",
    REFVID_ADMIN_TOKEN: randomBytes(16).toString("hex"),
    REFVID_SIGNING_SECRET: randomBytes(24).toString("hex"),
    REFVID_METRICS_TOKEN: randomBytes(16).toString("hex"),
    POSTGRES_USER: "refvid",
    POSTGRES_DB: "refvid",
    POSTGRES_PASSWORD: randomBytes(12).toString("hex"),
    // The stand-in object store (Swift's tempauth) wants its key id as refvid:<user>.
    S3_ACCESS_KEY: "refvid:deploy",
    S3_SECRET_KEY: randomBytes(16).toString("hex"),
    S3_BUCKET: "refvid-media",
    REFVID_PROVIDER: "simulated",
    HTTP_PORT: String(ports[0]),
    HTTPS_PORT: String(ports[1]),
    API_1_PORT: String(ports[2]),
    API_2_PORT: String(ports[3]),
    WORKER_1_PORT: String(ports[4]),
    WORKER_2_PORT: String(ports[5]),
    POSTGRES_PORT: String(ports[6]),
    S3_PORT: String(ports[7]),
    API_1_PROBE_PORT: String(ports[8]),
    API_2_PROBE_PORT: String(ports[9]),
    REFVID_IMAGE: imageUnderTest(),
  };
  await writeFile(
    join(work, ".env"),
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
  );
}, 60_000);

afterAll(async () => {
  if (work) {
    await compose("down", "-v", "--remove-orphans").catch(() => "");
    await rm(work, { recursive: true, force: true });
  }
}, 120_000);

describe("the compose stack", () => {
  it("refuses to start without the secrets of .env.example filled in", async () => {
    const example = join(ROOT, "deploy/.env.example");
    await expect(
      execFileAsync("docker-compose", ["--env-file", example, "-f", COMPOSE, "config", "-q"]),
    ).rejects.toThrow(/set \w+ in \.env/);
    await compose("config", "-q");
  });

  it("serves runs over TLS through the proxy, with migrations and the bucket made before the API", async () => {
    await compose("up", "-d", "--no-build");
    // Caddy makes its CA on its first start.
    ca = await eventually(
      async () =>
        docker("exec", `${project}_proxy_1`, "cat", "/data/caddy/pki/authorities/local/root.crt").catch(
          () => undefined,
        ),
      60_000,
      "Caddy's root certificate",
    );
    await eventually(
      async () => ((await https("GET", "/readyz").catch(() => undefined))?.status === 200 ? true : undefined),
      120_000,
      "the stack to answer through the proxy",
    );
    expect(await docker("inspect", "-f", "{{.State.ExitCode}}", `${project}_migrate_1`)).toBe("0");
    expect(await docker("logs", `${project}_migrate_1`)).toContain(`bucket ${env.S3_BUCKET} created`);

    const admin = (method: string, path: string, body?: unknown) =>
      https(method, path, { auth: `Bearer ${env.REFVID_ADMIN_TOKEN}`, body }).then((r) => r.json());
    const org = await admin("POST", "/admin/v1/organizations", { name: "compose" });
    await admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, { amount_usd: "50.00" });
    const { key } = await admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {});
    const auth = `Key ${key}`;

    const uploaded = await https("POST", "/v1/files", {
      auth,
      raw: await readFile(SCULPTURE),
      type: "image/png",
    });
    expect(uploaded.status).toBe(201);
    const run = await https("POST", `/v1/run/${MODEL}`, {
      auth,
      body: {
        input: {
          prompt: "through the proxy",
          image_urls: [uploaded.json().url],
          duration: "4",
          resolution: "480p",
        },
        sync: true,
      },
    });
    expect(run.json(), run.body.toString()).toMatchObject({ status: "succeeded" });
    const video = new URL(run.json().output.videos[0].url);
    expect(video.origin).toBe(env.REFVID_PUBLIC_URL);
    const file = await https("GET", `${video.pathname}${video.search}`);
    expect(file.status).toBe(200);
    await writeFile(join(work, "out.mp4"), file.body);
    expect(await probeDuration(join(work, "out.mp4"), { timeoutMs: 20_000 })).toBeCloseTo(4, 0);

    // One API process stopped: the proxy sends every request to the other.
    await compose("stop", "api-1");
    for (let i = 0; i < 6; i++) expect((await https("GET", "/v1/account", { auth })).status).toBe(200);
    await compose("start", "api-1");
  });
});
