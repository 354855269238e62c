/**
 * Fuzz over every operation: strings with U+0000, unpaired surrogates, percent signs, controls,
 * noncharacters and other rare code points go into every string field, every property name of
 * metadata, every path parameter and every query parameter, one slot per request. No answer may
 * be a 5xx, and a string no store can keep (U+0000 or an unpaired surrogate) must be
 * `400 invalid_request` naming the slot. The store is a real database: embedded PGlite in the
 * plain run, the Postgres server in `npm run test:postgres` (DATABASE_URL).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Who = "tenant" | "admin" | "anyone";

interface Operation {
  name: string;
  method: string;
  /** With `{param}` placeholders. */
  path: string;
  params: Record<string, string>;
  query: Record<string, string>;
  body?: Json;
  who: Who;
  /** False where the edge rule does not apply (signed file URLs answer 403, probes take no input). */
  guarded: boolean;
}

/** Where one odd string goes: a string leaf of the body, a metadata key, a path or query parameter. */
type Slot =
  | { kind: "body"; at: (string | number)[] }
  | { kind: "key"; at: (string | number)[] }
  | { kind: "path"; name: string }
  | { kind: "query"; name: string };

const ODD_UNITS = [
  "\u0000",
  "\ud800",
  "\udbff",
  "\udc00",
  "\udfff",
  "\ud83d\ude00",
  "\ufffe",
  "\uffff",
  "\ufeff",
  "\u0001",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u200b",
  "\u202e",
  "\u2028",
  "%",
  "%00",
  "%zz",
  "%ED%A0%80",
  "\\",
  '"',
  "'",
  "/",
  "..",
  "?",
  "#",
  "&",
  "=",
  "+",
  " ",
  "\t",
  "\n",
];

/** One UTF-16 code unit at a time, so unpaired surrogates come up as often as anything else. */
const unit = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ODD_UNITS) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)) },
  { weight: 2, arbitrary: fc.constantFrom("a", "b", "z", "0", "-", "_", ".") },
);
const oddString = fc.string({ unit, minLength: 0, maxLength: 12 });

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const unstorable = (text: string) => text.includes("\u0000") || LONE_SURROGATE.test(text);

/**
 * Percent-encodes a path segment or query value byte by byte. An unpaired surrogate, which
 * `encodeURIComponent` refuses, becomes the three bytes a lax encoder would send for it.
 */
function encode(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      out +=
        `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
    } else {
      out += encodeURIComponent(text[i] as string);
    }
  }
  return out;
}

/** Every string leaf and every metadata property name of a body. */
function slotsOf(value: Json, at: (string | number)[] = []): Slot[] {
  if (typeof value === "string") return [{ kind: "body", at }];
  if (Array.isArray(value)) return value.flatMap((v, i) => slotsOf(v, [...at, i]));
  if (value && typeof value === "object") {
    const keys: Slot[] = at[at.length - 1] === "metadata" ? [{ kind: "key", at }] : [];
    return [...keys, ...Object.entries(value).flatMap(([k, v]) => slotsOf(v, [...at, k]))];
  }
  return [];
}

function withValue(body: Json, slot: Slot, odd: string): Json {
  const copy = structuredClone(body) as Json;
  if (slot.kind !== "body" && slot.kind !== "key") return copy;
  let parent: any = copy;
  const path = slot.kind === "key" ? slot.at : slot.at.slice(0, -1);
  for (const step of path) parent = parent[step];
  if (slot.kind === "key") parent[odd] = "v";
  else parent[slot.at[slot.at.length - 1] as string | number] = odd;
  return copy;
}

/** The field the 400 must name: `body.input.image_urls[0]`, `body.metadata`, `path.run_id`, `query.x`. */
function fieldOf(slot: Slot): string {
  if (slot.kind === "path") return `path.${slot.name}`;
  if (slot.kind === "query") return `query.${slot.name}`;
  return slot.at.reduce<string>(
    (acc, step) => (typeof step === "number" ? `${acc}[${step}]` : `${acc}.${step}`),
    "body",
  );
}

function describeSlot(slot: Slot): string {
  return slot.kind === "path" || slot.kind === "query"
    ? fieldOf(slot)
    : `${fieldOf(slot)}${slot.kind === "key" ? " (a key)" : ""}`;
}

const IMG = "https://example.com/refs/a.png";
const VID = "https://example.com/refs/a.mp4";
const AUD = "https://example.com/refs/a.mp3";
const METADATA = { order_id: "ord_1", user: "u_42" };

let t: TestRefvid;
let tenant: Tenant;
let pgliteDir: string | undefined;
let operations: Operation[];

beforeAll(async () => {
  // Postgres when the run has DATABASE_URL (test:postgres), else the embedded PGlite store.
  pgliteDir = process.env.DATABASE_URL ? undefined : await mkdtemp(join(tmpdir(), "refvid-fuzz-pglite-"));
  t = await startTestRefvid(pgliteDir ? { REFVID_STORE: `pglite:${pgliteDir}` } : {});
  tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
  const done = await tenant.call("POST", "/v1/run/lab-d/model-d/reference-to-video", {
    input: { prompt: "p", image_urls: [IMG], duration: "4s" },
    sync: true,
  });
  expect(done.body.status).toBe("succeeded");
  const fileUrl = new URL(done.body.output.videos[0].url);
  const extraKey = await t.admin("POST", `/admin/v1/organizations/${tenant.organizationId}/api-keys`, {
    name: "spare",
  });
  const run = { run_id: done.body.run_id as string };
  const org = { organization_id: tenant.organizationId };
  const key = { api_key_id: extraKey.body.api_key_id as string };
  const op = (o: Partial<Operation> & Pick<Operation, "name" | "method" | "path">): Operation => ({
    params: {},
    query: {},
    who: "tenant",
    guarded: true,
    ...o,
  });
  const submit = (slug: string, input: Json): Operation =>
    op({
      name: `submit ${slug.split("/")[1]}`,
      method: "POST",
      path: "/v1/run/{lab}/{model}/{category}",
      params: Object.fromEntries(
        ["lab", "model", "category"].map((k, i) => [k, slug.split("/")[i] as string]),
      ),
      body: { input, webhook_url: "https://example.com/hook", metadata: METADATA },
    });
  operations = [
    submit("lab-a/model-a/reference-to-video", {
      prompt: "@Image1 walks",
      image_urls: [IMG],
      video_urls: [VID],
      audio_urls: [AUD],
      duration: "4",
      resolution: "480p",
      aspect_ratio: "16:9",
      bitrate_mode: "standard",
      end_user_id: "user_1",
    }),
    submit("lab-b/model-b/reference-to-video", {
      prompt: "Image 1 dances",
      reference_image_urls: [IMG],
      reference_video_urls: [VID],
      reference_audio_urls: [AUD],
      resolution: "480P",
      aspect_ratio: "adaptive",
      prompt_expansion_mode: "balanced",
    }),
    submit("lab-c/model-c/reference-to-video", {
      prompt: "@Image1 on a hill",
      reference_image_urls: [IMG],
      resolution: "720p",
      duration: "5",
    }),
    submit("lab-d/model-d/reference-to-video", { prompt: "a dolly shot", image_urls: [IMG], duration: "4s" }),
    op({ name: "poll", method: "GET", path: "/v1/runs/{run_id}", params: run }),
    op({ name: "cancel", method: "POST", path: "/v1/runs/{run_id}/cancel", params: run }),
    op({
      name: "search",
      method: "POST",
      path: "/v1/runs/search",
      body: {
        status: ["succeeded"],
        endpoint: "lab-d/model-d/reference-to-video",
        created_after: "2020-01-01T00:00:00Z",
        created_before: "2100-01-01T00:00:00Z",
        metadata: METADATA,
        cursor: "eyJ0IjoiMjAyMC0wMS0wMVQwMDowMDowMC4wMDBaIiwiaSI6InJ1bl8xIiwiZiI6Inh4In0",
      },
    }),
    op({
      name: "preview",
      method: "POST",
      path: "/v1/pricing/preview",
      body: {
        endpoint: "lab-a/model-a/reference-to-video",
        input: { prompt: "p", image_urls: [IMG], resolution: "720p", duration: "5" },
      },
    }),
    op({ name: "account", method: "GET", path: "/v1/account", query: { x: "1" } }),
    op({ name: "webhook secret", method: "GET", path: "/v1/webhooks/secret", query: { x: "1" } }),
    op({
      name: "file",
      method: "GET",
      path: "/v1/files/{file_id}",
      params: { file_id: fileUrl.pathname.split("/").pop() as string },
      query: Object.fromEntries(fileUrl.searchParams),
      who: "anyone",
      guarded: false,
    }),
    op({
      name: "create organization",
      method: "POST",
      path: "/admin/v1/organizations",
      body: { name: "Acme" },
      who: "admin",
    }),
    op({
      name: "get organization",
      method: "GET",
      path: "/admin/v1/organizations/{organization_id}",
      params: org,
      who: "admin",
    }),
    op({
      name: "create API key",
      method: "POST",
      path: "/admin/v1/organizations/{organization_id}/api-keys",
      params: org,
      body: { environment: "test", name: "k" },
      who: "admin",
    }),
    op({
      name: "top up",
      method: "POST",
      path: "/admin/v1/organizations/{organization_id}/top-ups",
      params: org,
      body: { amount_usd: "1.00", note: "n" },
      who: "admin",
    }),
    op({
      name: "rename API key",
      method: "PATCH",
      path: "/admin/v1/api-keys/{api_key_id}",
      params: key,
      body: { name: "k2" },
      who: "admin",
    }),
    op({
      name: "revoke API key",
      method: "DELETE",
      path: "/admin/v1/api-keys/{api_key_id}",
      params: key,
      who: "admin",
    }),
    op({
      name: "healthz",
      method: "GET",
      path: "/healthz",
      query: { x: "1" },
      who: "anyone",
      guarded: false,
    }),
    op({ name: "readyz", method: "GET", path: "/readyz", query: { x: "1" }, who: "anyone", guarded: false }),
  ];
}, 60_000);

afterAll(async () => {
  await t?.close();
  if (pgliteDir) await rm(pgliteDir, { recursive: true, force: true });
  expect(t.mismatches).toEqual([]);
});

async function send(op: Operation, slot: Slot, odd: string): Promise<{ status: number; body: any }> {
  let path = op.path;
  for (const [name, value] of Object.entries(op.params)) {
    path = path.replace(
      `{${name}}`,
      slot.kind === "path" && slot.name === name ? encode(odd) : encode(value),
    );
  }
  const query = Object.entries(op.query).map(
    ([name, value]) => `${name}=${slot.kind === "query" && slot.name === name ? encode(odd) : encode(value)}`,
  );
  const url = `${t.url}${path}${query.length ? `?${query.join("&")}` : ""}`;
  const body = op.body === undefined ? undefined : JSON.stringify(withValue(op.body, slot, odd));
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  if (op.who === "tenant") headers.authorization = `Key ${tenant.apiKey}`;
  if (op.who === "admin") headers.authorization = `Bearer ${t.adminToken}`;
  const res = await fetch(url, { method: op.method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a video, or not JSON
  }
  return { status: res.status, body: parsed };
}

describe("odd strings in every slot of every operation", () => {
  it("never get a 5xx, and unstorable ones get 400 naming the slot", async () => {
    const slots = operations.flatMap((op) => [
      ...Object.keys(op.params).map((name) => [op, { kind: "path", name }] as const),
      ...Object.keys(op.query).map((name) => [op, { kind: "query", name }] as const),
      ...(op.body === undefined ? [] : slotsOf(op.body).map((slot) => [op, slot] as const)),
    ]) as [Operation, Slot][];
    expect(slots.length).toBeGreaterThan(60);
    let requests = 0;
    for (const [op, slot] of slots) {
      await fc.assert(
        fc.asyncProperty(oddString, async (odd) => {
          requests++;
          const res = await send(op, slot, odd);
          const what = `${op.name}, ${describeSlot(slot)} = ${JSON.stringify(odd)}`;
          expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBeLessThan(500);
          if (op.guarded && unstorable(odd)) {
            expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
            expect(
              res.body.error.fields.map((f: { field: string }) => f.field),
              what,
            ).toContain(fieldOf(slot));
          }
        }),
        { numRuns: 4, examples: [["\u0000"], ["x\ud800"], ["%00"]] },
      );
    }
    expect(requests).toBeGreaterThan(250);
  }, 60_000);
});
