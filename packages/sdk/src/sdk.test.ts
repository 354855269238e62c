/**
 * The generated SDK against a real HTTP server (node:http on 127.0.0.1, an ephemeral port): nothing
 * is mocked, requests go through the generated fetch client and global fetch.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ZodError, type ZodType } from "zod";
import * as generatedOperations from "./generated/sdk.gen.js";
import * as sdkModule from "./index.js";
import {
  type CreateOrganizationRequest,
  createRefvidClient,
  createRefvidSdk,
  getRun,
  type Run,
  type SubmitModelARunRequest,
  type submitModelARun,
} from "./index.js";

// --- the OpenAPI bundle (single source of truth) ------------------------------------------------

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}
interface Bundle {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
const bundlePath = require.resolve("@refvid/api-types/openapi.json");
const bundle = JSON.parse(readFileSync(bundlePath, "utf8")) as Bundle;

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

function operationsOf(items: Bundle["paths"]): { path: string; method: string; op: Operation }[] {
  const out: { path: string; method: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(items)) {
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.has(method)) out.push({ path, method, op });
    }
  }
  return out;
}

const bundleOperations = operationsOf(bundle.paths);

/** Follows local `$ref`s (`#/components/...`). */
function deref(value: unknown): unknown {
  let current = value;
  for (let depth = 0; depth < 32; depth++) {
    if (typeof current !== "object" || current === null || !("$ref" in current)) return current;
    const ref = (current as { $ref: string }).$ref;
    current = ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], bundle);
  }
  throw new Error("$ref chain too deep");
}

/** The value of a named example of the bundle (`components.examples.<name>.value`). */
function example<T = unknown>(name: string): T {
  const ex = bundle.components.examples?.[name] as { value?: unknown } | undefined;
  if (ex?.value === undefined) throw new Error(`components.examples.${name} not found in the bundle`);
  return structuredClone(ex.value) as T;
}

// --- a real local server ----------------------------------------------------------------------

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}
interface Reply {
  status: number;
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

let server: Server;
let baseUrl: string;
let received: Received[] = [];
let reply: (req: Received) => Reply = () => ({ status: 500, body: { error: "no reply configured" } });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rec: Received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(rec);
      const r = reply(rec);
      const payload = r.rawBody ?? (r.body === undefined ? "" : JSON.stringify(r.body));
      res.writeHead(r.status, { "content-type": "application/json", ...r.headers });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

beforeEach(() => {
  received = [];
});

function only(): Received {
  expect(received).toHaveLength(1);
  const [first] = received;
  if (first === undefined) throw new Error("no request received");
  return first;
}

const API_KEY = "sk-test-0123456789abcdef";
const ADMIN_TOKEN = "admin-token-for-tests";

// --- tests --------------------------------------------------------------------------------------

describe("generated functions against a real server", () => {
  it("submitModelARun POSTs the JSON body with `Key` auth and parses the Run", async () => {
    const submit = example<SubmitModelARunRequest>("SubmitModelA");
    const queued = example<Run>("RunQueuedModelA");
    reply = () => ({ status: 201, body: queued, headers: { location: `/v1/runs/${queued.run_id}` } });

    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY });
    const result = await sdk.submitModelARun({ body: submit });

    const req = only();
    expect(req.method).toBe("POST");
    expect(req.url).toBe("/v1/run/lab-a/model-a/reference-to-video");
    expect(req.headers.authorization).toBe(`Key ${API_KEY}`);
    expect(req.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(req.body)).toEqual(submit);

    expect(result.error).toBeUndefined();
    expect(result.response.status).toBe(201);
    const run: Run | undefined = result.data;
    expect(run).toEqual(queued);
    expect(run?.status).toBe("queued");
  });

  it("a generated function called directly with a client sends `Bearer` auth and path params", async () => {
    const runValue = example<Run>("RunProcessing");
    reply = () => ({ status: 200, body: runValue });

    const client = createRefvidClient({ baseUrl, apiKey: API_KEY, authScheme: "Bearer" });
    const result = await getRun({ client, path: { run_id: runValue.run_id } });

    const req = only();
    expect(req.method).toBe("GET");
    expect(req.url).toBe(`/v1/runs/${runValue.run_id}`);
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.body).toBe("");
    expect(result.data).toEqual(runValue);
  });

  it("Admin operations send `Bearer <admin token>`; the other operations keep the API key", async () => {
    const organization = example("Organization");
    reply = (req) =>
      req.url.startsWith("/admin/")
        ? { status: 201, body: organization }
        : { status: 200, body: example("RunProcessing") };

    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY, adminToken: ADMIN_TOKEN });
    const created = await sdk.createOrganization({
      body: example<CreateOrganizationRequest>("CreateOrganizationRequest"),
    });
    const admin = only();
    expect(admin.method).toBe("POST");
    expect(admin.url).toBe("/admin/v1/organizations");
    expect(admin.headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(JSON.parse(admin.body)).toEqual(example("CreateOrganizationRequest"));
    expect(created.data).toEqual(organization);

    received = [];
    const run = example<Run>("RunProcessing");
    await sdk.getRun({ path: { run_id: run.run_id } });
    expect(only().headers.authorization).toBe(`Key ${API_KEY}`);
  });

  it("operations without security send no credentials", async () => {
    reply = () => ({ status: 200, body: example("HealthOk") });
    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY, adminToken: ADMIN_TOKEN });
    const result = await sdk.getHealth();
    const req = only();
    expect(req.url).toBe("/healthz");
    expect(req.headers.authorization).toBeUndefined();
    expect(result.data).toEqual(example("HealthOk"));
  });

  it("the zod response validation rejects a malformed response body", async () => {
    const bad = { ...example<Record<string, unknown>>("RunProcessing"), status: "exploded", run_id: 42 };
    reply = () => ({ status: 200, body: bad });

    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY });
    const call = sdk.getRun({ path: { run_id: "run_0f8c3a52-5d0e-4b8e-9d3c-2a7f1e6b9c41" } });
    await expect(call).rejects.toBeInstanceOf(ZodError);
    const error = (await call.catch((e: unknown) => e)) as ZodError;
    const paths = error.issues.map((issue) => issue.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["run_id", "status"]));
    expect(received).toHaveLength(1); // the request was sent; the response was refused
  });

  it("the zod request validation rejects an invalid body before sending it", async () => {
    reply = () => ({ status: 201, body: example("RunQueuedModelA") });
    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY });
    const invalid = { input: { prompt: 42 } } as unknown as Parameters<typeof submitModelARun>[0]["body"];
    await expect(sdk.submitModelARun({ body: invalid })).rejects.toBeInstanceOf(ZodError);
    expect(received).toHaveLength(0);
  });

  it("an error response surfaces the interface's error body", async () => {
    const notFound = example<{ error: { type: string; code: number; message: string } }>("RunNotFound");
    reply = () => ({ status: 404, body: notFound, headers: { "x-request-id": "req_3b1d9c0e7f2a4c6b" } });
    const runId = "run_0f8c3a52-5d0e-4b8e-9d3c-2a7f1e6b9c41";

    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY });
    const result = await sdk.getRun({ path: { run_id: runId } });
    expect(result.data).toBeUndefined();
    expect(result.response.status).toBe(404);
    expect(result.error).toEqual(notFound);
    const body = result.error?.error;
    expect(typeof body === "object" ? body.type : body).toBe("run_not_found");
    expect(sdkModule.zError.safeParse(result.error).success).toBe(true);

    // With throwOnError the same body is thrown.
    await expect(sdk.getRun({ path: { run_id: runId }, throwOnError: true })).rejects.toEqual(notFound);
  });

  it("a 401 without credentials surfaces the Unauthorized body", async () => {
    const unauthorized = example("Unauthorized");
    reply = (req) => (req.headers.authorization ? { status: 500 } : { status: 401, body: unauthorized });
    const sdk = createRefvidSdk({ baseUrl });
    const result = await sdk.getAccount();
    expect(only().headers.authorization).toBeUndefined();
    expect(result.response.status).toBe(401);
    expect(result.error).toEqual(unauthorized);
  });
});

describe("the SDK covers the bundle", () => {
  const operationIds = bundleOperations.map(({ op }) => op.operationId);

  it("every operation of the bundle has an operationId", () => {
    expect(operationIds.length).toBeGreaterThan(0);
    expect(operationIds.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
  });

  it("has a function for every operationId (module exports and createRefvidSdk)", () => {
    const sdk = createRefvidSdk({ baseUrl: "http://127.0.0.1:1" });
    const exported = sdkModule as unknown as Record<string, unknown>;
    const bound = sdk as unknown as Record<string, unknown>;
    const missing = operationIds.filter(
      (id) => typeof exported[id ?? ""] !== "function" || typeof bound[id ?? ""] !== "function",
    );
    expect(missing).toEqual([]);
  });

  it("generates no function for an operation that is not in the bundle", () => {
    const generated = Object.entries(generatedOperations)
      .filter(([, value]) => typeof value === "function")
      .map(([name]) => name)
      .sort();
    expect(generated).toEqual([...operationIds].sort());
  });

  it("the Admin operations (AdminToken) are exactly the paths under /admin/", () => {
    // createRefvidSdk picks the admin token by the `/admin/` URL prefix; keep that true.
    for (const { path, op } of bundleOperations) {
      const usesAdminToken = (op.security ?? []).some((requirement) => "AdminToken" in requirement);
      expect({ path, usesAdminToken }).toEqual({ path, usesAdminToken: path.startsWith("/admin/") });
    }
  });

  it("every JSON example in the bundle passes the generated zod schemas", () => {
    const schemas = sdkModule as unknown as Record<string, ZodType | undefined>;
    /** The component schema names a media type's schema refers to (`$ref`, or anyOf/oneOf of `$ref`s). */
    const schemaNames = (schema: unknown): string[] => {
      const s = schema as { $ref?: string; anyOf?: unknown[]; oneOf?: unknown[] } | undefined;
      if (s?.$ref?.startsWith("#/components/schemas/")) return [s.$ref.slice("#/components/schemas/".length)];
      return [...(s?.anyOf ?? []), ...(s?.oneOf ?? [])].flatMap(schemaNames);
    };
    const failures: string[] = [];
    let checked = 0;
    const checkContent = (where: string, container: unknown) => {
      const content = (deref(container) as { content?: Record<string, unknown> } | undefined)?.content ?? {};
      for (const [mediaType, media] of Object.entries(content)) {
        if (!mediaType.includes("json")) continue;
        const { schema, examples = {} } = media as { schema?: unknown; examples?: Record<string, unknown> };
        const validators = schemaNames(schema).map((name) => {
          const validator = schemas[`z${name}`];
          if (validator === undefined) throw new Error(`${where}: no generated schema z${name}`);
          return validator;
        });
        if (validators.length === 0) continue;
        for (const [exampleName, ex] of Object.entries(examples)) {
          const { value } = deref(ex) as { value: unknown };
          checked++;
          if (!validators.some((validator) => validator.safeParse(value).success)) {
            failures.push(`${where} ${mediaType} example ${exampleName}`);
          }
        }
      }
    };
    const all = [
      ...bundleOperations.map((entry) => ({ ...entry, label: entry.op.operationId ?? entry.path })),
      ...operationsOf(bundle.webhooks).map((entry) => ({ ...entry, label: `webhook ${entry.path}` })),
    ];
    for (const { label, op } of all) {
      if (op.requestBody !== undefined) checkContent(`${label} request`, op.requestBody);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        checkContent(`${label} ${status}`, response);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it("every generated file begins with the do-not-edit header", () => {
    const dir = fileURLToPath(new URL("./generated/", import.meta.url));
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
    expect(files.length).toBeGreaterThan(5);
    const withoutHeader = files.filter((file) => {
      const [first, second] = readFileSync(file, "utf8").split("\n", 2);
      return !(
        first === "// This file is auto-generated by @hey-api/openapi-ts" &&
        second?.startsWith("// DO NOT EDIT.")
      );
    });
    expect(withoutHeader).toEqual([]);
  });
});
