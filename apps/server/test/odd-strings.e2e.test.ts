/**
 * Strings no store can keep: U+0000 (Postgres text cannot hold it) and unpaired UTF-16 surrogates
 * (not Unicode, so they cannot be stored or echoed back faithfully). Wherever one arrives — a body
 * field, a property name, a path id, a query parameter — the answer is the same on every store:
 * `400 invalid_request` naming the field, never a 500, and nothing is created. Runs on the memory
 * store and again on Postgres (`npm run test:postgres`); the fuzz test covers PGlite too.
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { type Tenant, useTestRefvid } from "./harness.js";

const NUL = "\u0000";
const LONE_HIGH = "\ud800";
const LONE_LOW = "\udfff";
const IMG = "https://example.com/refs/a.png";
const A = "/v1/run/lab-a/model-a/reference-to-video";
const okA = { prompt: "a cat walks through rain", image_urls: [IMG] };

const t = useTestRefvid();
let tenant: Tenant;
let organizationId: string;
let apiKeyId: string;

beforeAll(async () => {
  tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
  organizationId = tenant.organizationId;
  apiKeyId = tenant.apiKeyId;
  const run = await tenant.call("POST", A, { input: okA });
  expect(run.status).toBe(201);
});

/** The one answer: 400 invalid_request whose fields name `field`. */
function expectNamed(res: { status: number; body: any }, field: string) {
  expect({ status: res.status, body: res.body }).toMatchObject({
    status: 400,
    body: { error: { type: "invalid_request", code: 400 } },
  });
  expect(res.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
  for (const f of res.body.error.fields) expect(f.message).toMatch(/U\+0000|surrogate|UTF-8/);
}

type Case = [label: string, method: string, path: string, body: unknown, field: string];

/** One case per string field of a submit, for each offending string. */
function submitCases(bad: string, label: string): Case[] {
  return [
    [`prompt with ${label}`, "POST", A, { input: { ...okA, prompt: `a ${bad} cat` } }, "body.input.prompt"],
    [
      `image URL with ${label}`,
      "POST",
      A,
      { input: { ...okA, image_urls: [IMG, `${IMG}?x=${bad}`] } },
      "body.input.image_urls[1]",
    ],
    [
      `end_user_id with ${label}`,
      "POST",
      A,
      { input: { ...okA, end_user_id: `u${bad}` } },
      "body.input.end_user_id",
    ],
    [
      `webhook_url with ${label}`,
      "POST",
      A,
      { input: okA, webhook_url: `https://example.com/${bad}` },
      "body.webhook_url",
    ],
    [
      `metadata value with ${label}`,
      "POST",
      A,
      { input: okA, metadata: { order_id: `ord${bad}` } },
      "body.metadata.order_id",
    ],
    [
      `metadata key with ${label}`,
      "POST",
      A,
      { input: okA, metadata: { [`order${bad}`]: "1" } },
      "body.metadata",
    ],
    [
      `search metadata filter with ${label}`,
      "POST",
      "/v1/runs/search",
      { metadata: { order_id: bad } },
      "body.metadata.order_id",
    ],
    [`search cursor with ${label}`, "POST", "/v1/runs/search", { cursor: `c${bad}` }, "body.cursor"],
    [
      `preview prompt with ${label}`,
      "POST",
      "/v1/pricing/preview",
      { endpoint: "lab-a/model-a/reference-to-video", input: { ...okA, prompt: bad } },
      "body.input.prompt",
    ],
  ];
}

describe("offending strings in bodies are 400 naming the field", () => {
  it.each([...submitCases(NUL, "NUL"), ...submitCases(LONE_HIGH, "a lone high surrogate")])(
    "%s",
    async (_label, method, path, body, field) => {
      expectNamed(await tenant.call(method, path, body), field);
    },
  );

  it("a lone low surrogate, and a low before a high, are named too", async () => {
    const low = await tenant.call("POST", A, { input: { ...okA, prompt: `x${LONE_LOW}` } });
    expectNamed(low, "body.input.prompt");
    const swapped = await tenant.call("POST", A, { input: { ...okA, prompt: "\udc00\ud800" } });
    expectNamed(swapped, "body.input.prompt");
  });

  it("accepts paired surrogates (emoji) and other rare code points, and keeps them exactly", async () => {
    const rare = "a 😀 cat \u200b\u202e\ufffe\uffff\u0001\u2028 in rain";
    const res = await tenant.call("POST", A, {
      input: { ...okA, prompt: rare },
      metadata: { "😀": rare },
    });
    expect(res.status).toBe(201);
    const polled = await tenant.call("GET", `/v1/runs/${res.body.run_id}`);
    expect(polled.body.metadata).toEqual({ "😀": rare });
    const found = await tenant.call("POST", "/v1/runs/search", { metadata: { "😀": rare } });
    expect(found.body.data.map((r: { run_id: string }) => r.run_id)).toEqual([res.body.run_id]);
  });

  it("created no run from any of them", async () => {
    const search = await tenant.call("POST", "/v1/runs/search", {});
    expect(search.status).toBe(201);
    // The setup run and the emoji run only.
    expect(search.body.data).toHaveLength(2);
  });
});

describe("a search cursor", () => {
  it("made by hand with NUL in the run id it continues from is 400 naming the cursor", async () => {
    // Made as an unsigned cursor was, base64url JSON {t, i, f} with f a hash of the filters.
    const f = createHash("sha256").update(JSON.stringify({})).digest("base64url").slice(0, 16);
    const cursor = Buffer.from(
      JSON.stringify({ t: "2020-01-01T00:00:00.000Z", i: "run_\u0000", f }),
    ).toString("base64url");
    const res = await tenant.call("POST", "/v1/runs/search", { cursor });
    expect({ status: res.status, body: res.body }).toMatchObject({
      status: 400,
      body: { error: { type: "invalid_request", fields: [{ field: "body.cursor" }] } },
    });
  });
});

describe("offending strings in admin bodies are 400 naming the field", () => {
  it.each([
    ["organization name", "POST", "/admin/v1/organizations", { name: `Acme${NUL}` }, "body.name"],
    ["organization name", "POST", "/admin/v1/organizations", { name: `Acme${LONE_HIGH}` }, "body.name"],
    ["API key name", "POST", "/admin/v1/organizations/{org}/api-keys", { name: `k${NUL}` }, "body.name"],
    [
      "top-up note",
      "POST",
      "/admin/v1/organizations/{org}/top-ups",
      { amount_usd: "1.00", note: `n${LONE_LOW}` },
      "body.note",
    ],
    ["API key rename", "PATCH", "/admin/v1/api-keys/{key}", { name: `k${NUL}` }, "body.name"],
  ])("%s", async (_label, method, path, body, field) => {
    const res = await t.admin(method, path.replace("{org}", organizationId).replace("{key}", apiKeyId), body);
    expectNamed(res, field);
  });
});

describe("offending path ids and query parameters are 400 naming the parameter", () => {
  it.each<[string, string, string, string]>([
    ["poll, %00 in run_id", "GET", "/v1/runs/run_%00x", "path.run_id"],
    ["poll, run_id encoding a surrogate", "GET", "/v1/runs/run_%ED%A0%80", "path.run_id"],
    ["poll, run_id not UTF-8", "GET", "/v1/runs/run_%FF", "path.run_id"],
    ["cancel, %00 in run_id", "POST", "/v1/runs/%00/cancel", "path.run_id"],
    ["generic submit, %00 in lab", "POST", "/v1/run/lab%00/model-a/reference-to-video", "path.lab"],
    ["account, %00 in a query parameter", "GET", "/v1/account?x=%00", "query.x"],
  ])("%s", async (_label, method, path, field) => {
    const body = method === "POST" ? { input: okA } : undefined;
    expectNamed(await tenant.call(method, path, body), field);
  });

  it.each<[string, string, string, unknown, string]>([
    [
      "organization, %00 in organization_id",
      "GET",
      "/admin/v1/organizations/org_%00",
      undefined,
      "path.organization_id",
    ],
    [
      "API keys, surrogate in organization_id",
      "POST",
      "/admin/v1/organizations/org_%ED%B0%80/api-keys",
      {},
      "path.organization_id",
    ],
    [
      "top-ups, %00 in organization_id",
      "POST",
      "/admin/v1/organizations/%00/top-ups",
      { amount_usd: "1.00" },
      "path.organization_id",
    ],
    ["rename, %00 in api_key_id", "PATCH", "/admin/v1/api-keys/key_%00", { name: "k" }, "path.api_key_id"],
    ["revoke, %00 in api_key_id", "DELETE", "/admin/v1/api-keys/key_%00", undefined, "path.api_key_id"],
  ])("%s", async (_label, method, path, body, field) => {
    expectNamed(await t.admin(method, path, body), field);
  });

  it("a file URL with %00 is refused like any other bad signature", async () => {
    const res = await fetch(`${t.url}/v1/files/file_%00abcdefgh?expires=1&signature=%00`);
    expect(res.status).toBe(403);
  });
});

describe("bodies nested deeper than any request needs", () => {
  it("are 400 naming the body, checked without recursion", async () => {
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    for (const [path, body] of [
      [A, `{"input": {"prompt": "p", "image_urls": ["${IMG}"]}, "metadata": {"k": ${deep}}}`],
      ["/v1/run/lab-x/model-x/reference-to-video", `{"input": {"prompt": ${deep}}}`],
      ["/v1/runs/search", `{"metadata": ${deep}}`],
    ]) {
      const res = await tenant.call("POST", path as string, body);
      expect({ status: res.status, body: res.body }).toMatchObject({
        status: 400,
        body: {
          error: {
            type: "invalid_request",
            fields: [{ field: "body", message: expect.stringMatching(/nested/) }],
          },
        },
      });
    }
  });
});
