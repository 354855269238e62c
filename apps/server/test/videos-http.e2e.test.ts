/**
 * The `/v1/videos` surface over raw HTTP, for what the `openai` SDK does not send: JSON bodies,
 * OpenRouter's `input_references[]` in a form, an Idempotency-Key, a model alias from the catalog
 * file, OpenAI's error shape on every error (authentication's and unknown paths' too), and the
 * organization's video webhook setting.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { D, fast, slow } from "./api-fixtures.js";
import { eventually, rawRequest, type Tenant, useTestRefvid } from "./harness.js";

const catalog = join(mkdtempSync(join(tmpdir(), "refvid-videos-")), "catalog.yaml");
writeFileSync(catalog, `aliases:\n  sora-2: ${D}\n`);
const t = useTestRefvid({ REFVID_CATALOG_FILE: catalog });
const IMAGE = "https://example.com/ref.png";
/** A 1x1 PNG. */
const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** A form's POST, as `fetch` sends FormData. */
const postForm = (tenant: Tenant, path: string, form: FormData, headers: Record<string, string> = {}) =>
  fetch(`${t.url}${path}`, {
    method: "POST",
    body: form,
    headers: { authorization: `Bearer ${tenant.apiKey}`, ...headers },
  }).then(async (res) => ({
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as { id: string },
  }));

/** OpenAI's error shape, with refvid's request id. */
function expectOpenAIError(
  res: { status: number; body: any },
  status: number,
  param: string | null,
  code: string,
) {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({
    error: {
      message: expect.any(String),
      type: expect.any(String),
      param,
      code,
      request_id: expect.stringMatching(/^req_/),
    },
  });
}

describe("the videos surface over HTTP", () => {
  it("takes JSON, an alias of the catalog file, and OpenRouter's input_references in a form", async () => {
    const tenant = await t.tenant();
    const json = await tenant.call("POST", "/v1/videos", {
      model: "sora-2",
      prompt: fast(),
      seconds: 4,
      size: "1080x1080",
      input_references: [{ type: "image_url", image_url: { url: IMAGE } }],
    });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ object: "video", model: "sora-2", seconds: "4", size: "1080x1080" });
    const run = await tenant.call("GET", `/v1/runs/${json.body.id}`);
    expect(run.body.endpoint).toBe(D);

    const form = new FormData();
    form.append("prompt", fast());
    form.append("model", D);
    form.append("input_references[][type]", "image_url");
    form.append("input_references[][image_url][url]", IMAGE);
    form.append("input_references[][type]", "image_url");
    form.append("input_references[][image_url][url]", "https://example.com/second.png");
    const made = await postForm(tenant, "/v1/videos", form);
    expect(made.status).toBe(200);
    const stored = await t.refvid.deps.store.getRun(tenant.organizationId, made.body.id);
    expect(stored?.input.image_urls).toEqual([IMAGE, "https://example.com/second.png"]);
  });

  it("answers a repeated Idempotency-Key with the same video", async () => {
    const tenant = await t.tenant();
    const body = { model: D, prompt: fast(), input_reference: { image_url: IMAGE } };
    const first = await tenant.call("POST", "/v1/videos", body, { "idempotency-key": "video-1" });
    const again = await tenant.call("POST", "/v1/videos", body, { "idempotency-key": "video-1" });
    expect(again.body.id).toBe(first.body.id);
    const other = await tenant.call(
      "POST",
      "/v1/videos",
      { ...body, prompt: fast("else") },
      { "idempotency-key": "video-1" },
    );
    expectOpenAIError(other, 422, null, "idempotency_key_reused");
    const long = await tenant.call("POST", "/v1/videos", body, { "idempotency-key": "k".repeat(256) });
    expectOpenAIError(long, 400, "Idempotency-Key", "invalid_request");
  });

  it("replays a retried Idempotency-Key that resends a data: URL or a file, keeping one upload", async () => {
    const tenant = await t.tenant();
    const uploads = async () =>
      (await tenant.call("GET", "/v1/account")).body.upload_quota.count_used as number;
    const dataUrl = `data:image/png;base64,${TINY_PNG.toString("base64")}`;
    const body = { model: D, prompt: fast(), input_reference: { image_url: dataUrl } };
    const first = await tenant.call("POST", "/v1/videos", body, { "idempotency-key": "data-1" });
    expect(first.status).toBe(200);
    expect(await uploads()).toBe(1);
    const again = await tenant.call("POST", "/v1/videos", body, { "idempotency-key": "data-1" });
    expect(again.body.id).toBe(first.body.id);
    expect(await uploads()).toBe(1);
    // Other bytes under the same key are another request.
    const otherBytes = Buffer.concat([TINY_PNG, Buffer.from([0])]).toString("base64");
    const other = await tenant.call(
      "POST",
      "/v1/videos",
      { ...body, input_reference: { image_url: `data:image/png;base64,${otherBytes}` } },
      { "idempotency-key": "data-1" },
    );
    expectOpenAIError(other, 422, null, "idempotency_key_reused");
    expect(await uploads()).toBe(1);

    const form = () => {
      const f = new FormData();
      f.set("model", D);
      f.set("prompt", fast("from a file"));
      f.set("input_reference", new Blob([TINY_PNG], { type: "image/png" }), "ref.png");
      return f;
    };
    const byFile = await postForm(tenant, "/v1/videos", form(), { "idempotency-key": "file-1" });
    expect(byFile.status).toBe(200);
    const byFileAgain = await postForm(tenant, "/v1/videos", form(), { "idempotency-key": "file-1" });
    expect(byFileAgain.body.id).toBe(byFile.body.id);
    expect(await uploads()).toBe(2);
  });

  it("answers every error in OpenAI's shape: a bad key, an unknown path, a bad page, content not ready", async () => {
    const tenant = await t.tenant();
    expectOpenAIError(
      await rawRequest(t.url, "GET", "/v1/videos", { headers: { authorization: "Bearer nope" } }),
      401,
      null,
      "unauthorized",
    );
    expectOpenAIError(await tenant.call("GET", "/v1/videos/x/y/z"), 404, null, "not_found");
    expectOpenAIError(await tenant.call("GET", "/v1/videos?limit=0"), 400, "limit", "invalid_request");
    expectOpenAIError(await tenant.call("GET", "/v1/videos?after=run_nope"), 400, "after", "invalid_request");
    expectOpenAIError(await tenant.call("GET", "/v1/videos/run_nope"), 404, null, "video_not_found");
    expectOpenAIError(
      await tenant.call("POST", "/v1/videos", { model: D }),
      400,
      "prompt",
      "invalid_request",
    );
    const held = await tenant.call("POST", "/v1/videos", {
      model: D,
      prompt: slow(),
      input_reference: { image_url: IMAGE },
    });
    expectOpenAIError(
      await tenant.call("GET", `/v1/videos/${held.body.id}/content`),
      409,
      null,
      "video_not_completed",
    );
    expectOpenAIError(
      await tenant.call("GET", `/v1/videos/${held.body.id}/content?variant=gif`),
      400,
      "variant",
      "invalid_request",
    );
    const missing = await tenant.call("POST", "/v1/videos", {
      model: D,
      prompt: fast(),
      input_reference: { file_id: "upload_nope" },
    });
    expectOpenAIError(missing, 404, null, "file_not_found");
    await tenant.call("DELETE", `/v1/videos/${held.body.id}`);
  });

  it("deletes a completed video's files: its run's video URL then answers 404", async () => {
    const tenant = await t.tenant();
    const made = await tenant.call("POST", "/v1/videos", {
      model: D,
      prompt: fast(),
      input_reference: { image_url: IMAGE },
    });
    // Two polls a second keep a slow render on a busy machine under the key's rate limit (120 a minute).
    const run = await eventually(
      async () => {
        const read = await tenant.call("GET", `/v1/runs/${made.body.id}`);
        expect(read.status).toBe(200);
        return read.body.status === "queued" || read.body.status === "processing" ? undefined : read.body;
      },
      60_000,
      "the video's run to end",
      500,
    );
    expect(run.status).toBe("succeeded");
    const [video] = run.output.videos;
    expect((await fetch(video.thumbnail_url)).status).toBe(200);
    expect((await tenant.call("DELETE", `/v1/videos/${made.body.id}`)).body.deleted).toBe(true);
    expect((await fetch(video.url)).status).toBe(404);
    expect((await fetch(video.thumbnail_url)).status).toBe(404);
  });

  it("keeps the organization's video webhook URL: read by any key, set by a live key only", async () => {
    const live = await t.tenant();
    expect((await live.call("GET", "/v1/webhooks/videos")).body).toEqual({ webhook_url: null });
    const bad = await live.call("PATCH", "/v1/webhooks/videos", { webhook_url: "ftp://example.com" });
    expect(bad.status).toBe(400);
    const test = await t.tenant({ environment: "test" });
    const refused = await test.call("PATCH", "/v1/webhooks/videos", {
      webhook_url: "https://example.com/hook",
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe("live_key_required");
  });

  it("refuses hostile forms with a 4xx and keeps serving: prototype names, a file name no store keeps, broken data: URLs", async () => {
    const tenant = await t.tenant();
    const polluting = new FormData();
    polluting.append("prompt", fast());
    polluting.append("__proto__[polluted]", "yes");
    const refused = await postForm(tenant, "/v1/videos", polluting);
    expect(refused.status).toBe(400);
    expect((refused.body as unknown as { error: { param: string } }).error.param).toBe("__proto__[polluted]");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    // A file name with a NUL, as RFC 5987 allows it to be written: a 400, not a thrown listener.
    const boundary = "refvid-test-boundary";
    const body = [
      `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n${fast()}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="input_reference"; filename*=utf-8''a%00.png\r\nContent-Type: image/png\r\n\r\n`,
      "not a png\r\n",
      `--${boundary}--\r\n`,
    ].join("");
    const nul = await tenant.call("POST", "/v1/videos", body, {
      "content-type": `multipart/form-data; boundary=${boundary}`,
    });
    expect(nul.status).toBe(400);
    // A form with no boundary cannot be read at all: a 400, not a rejection left unhandled.
    const unbounded = await tenant.call("POST", "/v1/videos", body, {
      "content-type": "multipart/form-data",
    });
    expect(unbounded.status).toBe(400);
    expect((await tenant.call("GET", "/v1/videos")).status).toBe(200);

    const broken = await tenant.call("POST", "/v1/videos", {
      model: D,
      prompt: fast(),
      input_reference: { image_url: "data:image/png,%E0%A4%A" },
    });
    expectOpenAIError(broken, 400, "input_reference", "invalid_request");
  });

  it("deletes the uploads of a create it refuses, and remixes only a completed video", async () => {
    const tenant = await t.tenant();
    const usage = async () =>
      (await tenant.call("GET", "/v1/account")).body.upload_quota.count_used as number;
    const before = await usage();
    const refused = await tenant.call("POST", "/v1/videos", {
      model: D,
      prompt: fast(),
      seconds: "5",
      input_reference: { image_url: `data:image/png;base64,${TINY_PNG.toString("base64")}` },
    });
    expectOpenAIError(refused, 400, "seconds", "invalid_request");
    expect(await usage()).toBe(before);

    const held = await tenant.call("POST", "/v1/videos", {
      model: D,
      prompt: slow(),
      input_reference: { image_url: IMAGE },
    });
    const remix = await tenant.call("POST", `/v1/videos/${held.body.id}/remix`, { prompt: fast() });
    expectOpenAIError(remix, 409, null, "video_not_completed");
    await tenant.call("DELETE", `/v1/videos/${held.body.id}`);
  });
});
