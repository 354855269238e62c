/**
 * End-to-end harness: starts the real refvid (HTTP server, worker, sweeper, dispatcher) on a
 * loopback port with the configuration operators use, plus helpers to set up tenants through the
 * admin API and a real webhook receiver. Every response is validated against the spec; a test
 * run fails if any response does not match (see `mismatches`).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRefvidClient, type RefvidClient } from "@refvid/client";
import { DESTROY_TIMEOUT_MS, testDatabases } from "@refvid/store/testing";
import pino from "pino";
import { afterAll, beforeAll, expect } from "vitest";
import { loadConfig } from "../src/config.js";
import { type RunningRefvid, type StartOptions, startRefvid } from "../src/runtime.js";
import { freePort } from "./processes.js";

export interface TestRefvid {
  url: string;
  adminToken: string;
  refvid: RunningRefvid;
  /** Responses that did not match the OpenAPI document; every test file asserts this stays empty. */
  mismatches: Error[];
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  tenant(options?: TenantOptions): Promise<Tenant>;
  close(): Promise<void>;
}

export interface TenantOptions {
  balanceUsd?: string;
  maxConcurrency?: number;
  rateLimitPerMinute?: number;
  /** The key's environment: live unless asked (test runs take nothing from the wallet). */
  environment?: "live" | "test";
}

export interface Tenant {
  organizationId: string;
  apiKeyId: string;
  apiKey: string;
  client: RefvidClient;
  /** Raw HTTP with this tenant's key: `call("POST", "/v1/...", body, { headers })`. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RawResponse>;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * Raw HTTP to refvid: a JSON body unless `body` is already a string, the answer's body parsed as
 * JSON when it is JSON (as text otherwise), and its text as sent.
 */
/** Raw HTTP to `url` with `apiKey` in the Authorization header, as a tenant's `call`. */
export function callerFor(url: string, apiKey: string): Tenant["call"] {
  return (method, path, body, headers = {}) =>
    rawRequest(url, method, path, { body, headers: { authorization: `Key ${apiKey}`, ...headers } });
}

export async function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<RawResponse & { text: string }> {
  const { body } = options;
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...options.headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * Starts refvid for the calling test file before its tests and stops it after them, failing the file
 * if any response did not match the spec. The returned object stands for the running instance.
 */
export function useTestRefvid(
  /** Variables, or a function giving them when refvid starts (after earlier `beforeAll`s ran). */
  env: Record<string, string> | (() => Record<string, string>) = {},
  options: Pick<StartOptions, "providers" | "clock" | "scheduler" | "logger"> = {},
): TestRefvid {
  let running: TestRefvid | undefined;
  beforeAll(async () => {
    running = await startTestRefvid(typeof env === "function" ? env() : env, options);
  }, 60_000);
  afterAll(async () => {
    await running?.close();
    expect(running?.mismatches ?? []).toEqual([]);
  }, DESTROY_TIMEOUT_MS);
  return new Proxy({} as TestRefvid, {
    get(_target, property) {
      if (!running) throw new Error("refvid is started in beforeAll; use it inside a test or hook");
      return Reflect.get(running, property);
    },
  });
}

/** A refvid of the test's own on the memory store, beside the suite's: `env` on top of the basics. */
export async function startOwnRefvid(
  env: Record<string, string>,
  onResponseMismatch?: (error: Error) => void,
) {
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-e2e-own-"));
  const config = loadConfig({
    REFVID_STORE: "memory",
    PORT: "0",
    REFVID_DATA_DIR: dataDir,
    REFVID_SEED_DEMO: "false",
    LOG_LEVEL: "silent",
    ...env,
  });
  const refvid = await startRefvid(config, {
    logger: pino({ level: "silent" }),
    ...(onResponseMismatch ? { onResponseMismatch } : {}),
  });
  return {
    refvid,
    stop: async () => {
      await refvid.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts refvid with test-friendly defaults; `env` overrides any variable, `options` the logger. */
export async function startTestRefvid(
  env: Record<string, string> = {},
  options: Pick<StartOptions, "providers" | "clock" | "scheduler" | "logger"> = {},
): Promise<TestRefvid> {
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-e2e-"));
  const adminToken = randomBytes(24).toString("hex");
  // With DATABASE_URL set, the suite runs on a fresh database of that Postgres server.
  const databases = process.env.DATABASE_URL ? await testDatabases(process.env.DATABASE_URL) : null;
  const store = databases ? { DATABASE_URL: await databases.create() } : { REFVID_STORE: "memory" };
  const configAt = (port: number) =>
    loadConfig({
      ...store,
      PORT: String(port),
      // The suites use example.com references, which the simulated provider does not fetch.
      REFVID_PROVIDER: "simulated",
      REFVID_ADMIN_TOKEN: adminToken,
      REFVID_SIMULATED_LATENCY_MS: "50",
      REFVID_DATA_DIR: dataDir,
      REFVID_SEED_DEMO: "false",
      REFVID_WEBHOOK_RETRY_DELAYS_MS: "0,200,200",
      REFVID_WEBHOOK_TIMEOUT_MS: "2000",
      LOG_LEVEL: "silent",
      ...env,
    });
  const mismatches: Error[] = [];
  const start = async () => {
    // A free port may be taken by another process before refvid binds it: try another one.
    for (let attempt = 1; ; attempt++) {
      try {
        return await startRefvid(configAt(await freePort()), {
          ...options,
          logger: options.logger ?? pino({ level: env.LOG_LEVEL ?? "silent" }),
          onResponseMismatch: (error) => mismatches.push(error),
        });
      } catch (err) {
        if (attempt >= 3 || !/already in use/.test((err as Error).message)) throw err;
      }
    }
  };
  const refvid = await start().catch(async (err: unknown) => {
    await databases?.destroy();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  const url = refvid.url;

  const admin: TestRefvid["admin"] = async (method, path, body) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };

  const tenant = async (options: TenantOptions = {}): Promise<Tenant> => {
    const org = await admin("POST", "/admin/v1/organizations", { name: "Test org" });
    const organizationId = org.body.organization_id as string;
    const key = await admin("POST", `/admin/v1/organizations/${organizationId}/api-keys`, {
      environment: options.environment ?? "live",
      ...(options.maxConcurrency ? { max_concurrency: options.maxConcurrency } : {}),
      ...(options.rateLimitPerMinute ? { rate_limit_per_minute: options.rateLimitPerMinute } : {}),
    });
    if (options.balanceUsd !== "0" && options.balanceUsd !== undefined) {
      await admin("POST", `/admin/v1/organizations/${organizationId}/top-ups`, {
        amount_usd: options.balanceUsd,
      });
    } else if (options.balanceUsd === undefined) {
      await admin("POST", `/admin/v1/organizations/${organizationId}/top-ups`, { amount_usd: "100.00" });
    }
    const apiKey = key.body.key as string;
    return {
      organizationId,
      apiKeyId: key.body.api_key_id,
      apiKey,
      client: createRefvidClient({ baseUrl: url, apiKey, retry: { maxRetries: 0 } }),
      call: callerFor(url, apiKey),
    };
  };

  return {
    url,
    adminToken,
    refvid,
    mismatches,
    admin,
    tenant,
    async close() {
      await refvid.close();
      await databases?.destroy();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A real HTTP server that records every request; `respond` decides each answer (200 by default). */
export async function startReceiver(
  respond: (request: ReceivedRequest, res: ServerResponse, index: number) => void | Promise<void> = (
    _r,
    res,
  ) => {
    res.writeHead(200).end("ok");
  },
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      requests.push(request);
      for (const wake of waiters.splice(0)) wake();
      void respond(request, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        if (Date.now() > deadline)
          throw new Error(`receiver got ${requests.length} of ${count} requests in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return requests.slice(0, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Polls every `intervalMs` until `check` returns a value (not undefined), or fails after
 * `timeoutMs`. A check that calls the API for a long wait should poll slowly enough to stay under
 * the key's rate limit (120 a minute unless the tenant asks for more).
 */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "condition",
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
