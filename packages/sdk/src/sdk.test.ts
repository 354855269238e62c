/**
 * The generated SDK against a real HTTP server (node:http on 127.0.0.1, an ephemeral port): nothing
 * is mocked, requests go through the generated fetch client and global fetch.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ZodError } from "zod";
import { example } from "../test/bundle.js";
import * as sdkModule from "./index.js";
import {
  type ApiCreateOrganizationRequest,
  type ApiRun,
  type ApiRunPage,
  type ApiSubmitModelARunRequest,
  createRefvidSdk,
  createRefvidSdkClient,
  getRun,
  type submitModelARun,
} from "./index.js";

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
    const submit = example<ApiSubmitModelARunRequest>("SubmitModelA");
    const queued = example<ApiRun>("RunQueuedModelA");
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
    const run: ApiRun | undefined = result.data;
    expect(run).toEqual(queued);
    expect(run?.status).toBe("queued");
  });

  it("a generated function called directly with a client sends `Bearer` auth and path params", async () => {
    const runValue = example<ApiRun>("RunProcessing");
    reply = () => ({ status: 200, body: runValue });

    const client = createRefvidSdkClient({ baseUrl, apiKey: API_KEY, authScheme: "Bearer" });
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
      body: example<ApiCreateOrganizationRequest>("CreateOrganizationRequest"),
    });
    const admin = only();
    expect(admin.method).toBe("POST");
    expect(admin.url).toBe("/admin/v1/organizations");
    expect(admin.headers.authorization).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(JSON.parse(admin.body)).toEqual(example("CreateOrganizationRequest"));
    expect(created.data).toEqual(organization);

    received = [];
    const run = example<ApiRun>("RunProcessing");
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

describe("forward compatibility: responses are returned as sent, not validated", () => {
  /** A run as a newer server may send it: a sixth status, a fifth model, fields this SDK lacks. */
  function newerRun(): Record<string, unknown> {
    const run = example<Record<string, unknown>>("RunSucceededModelA");
    return {
      ...run,
      status: "archived",
      endpoint: "lab-e/model-e/reference-to-video",
      model: "model-e",
      archived_at: "2026-01-02T03:04:05Z",
      billing: { ...(run.billing as Record<string, unknown>), carbon_grams: 12 },
    };
  }

  it("getRun returns a run with an unknown status, model slug and fields", async () => {
    const run = newerRun();
    reply = () => ({ status: 200, body: run });

    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY });
    const result = await sdk.getRun({ path: { run_id: String(run.run_id) }, throwOnError: true });
    expect(only().url).toBe(`/v1/runs/${String(run.run_id)}`);
    expect(result.data).toEqual(run);
    expect(result.data.status).toBe("archived");
    expect(result.data.endpoint).toBe("lab-e/model-e/reference-to-video");
    // The exported response schema (opt-in, strict) refuses that run: the SDK did not apply it.
    expect(sdkModule.zGetRunResponse.safeParse(run).success).toBe(false);
  });

  it("searchRuns returns a page of such runs, unknown page fields included", async () => {
    const page = { ...example<ApiRunPage>("RunPage"), total_estimate: 40 };
    page.data = [newerRun() as ApiRun, ...page.data];
    reply = () => ({ status: 200, body: page });

    const sdk = createRefvidSdk({ baseUrl, apiKey: API_KEY });
    const result = await sdk.searchRuns({ body: { status: ["succeeded"], limit: 10 } });
    const req = only();
    expect(req.url).toBe("/v1/runs/search");
    expect(JSON.parse(req.body)).toEqual({ status: ["succeeded"], limit: 10 });
    expect(result.error).toBeUndefined();
    expect(result.data).toEqual(page);
    expect(result.data?.data.map((run) => run.status)).toContain("archived");
    expect(sdkModule.zSearchRunsResponse.safeParse(page).success).toBe(false);
  });
});
