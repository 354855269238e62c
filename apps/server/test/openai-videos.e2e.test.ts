/**
 * The `/v1/videos` surface with the official `openai` npm package, unchanged, against a real
 * server (memory here; Postgres in the Postgres pass): create with an uploaded file, `{image_url}`
 * and a `data:` URL, poll, download the video (ffprobe reads its length) and its poster, page
 * through a list, remix, delete, the SDK's own error classes for a bad `seconds` and for the caps'
 * `429` (whose retries back off), test keys, and a `video.completed` webhook that verifies with
 * the `standardwebhooks` library.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import type { Video } from "openai/resources/videos";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ffmpeg, probeDuration } from "../src/media/ffmpeg.js";
import { D, fast, slow } from "./api-fixtures.js";
import { eventually, type Receiver, startReceiver, type Tenant, useTestRefvid } from "./harness.js";

const t = useTestRefvid();
const IMAGE = "https://example.com/ref.png";
let dir: string;
let png: Buffer;
let receiver: Receiver;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-openai-"));
  const path = join(dir, "ref.png");
  await ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1", path], { timeoutMs: 30_000 });
  png = await readFile(path);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

const openai = (tenant: Tenant, options: ConstructorParameters<typeof OpenAI>[0] = {}) =>
  new OpenAI({ apiKey: tenant.apiKey, baseURL: `${t.url}/v1`, maxRetries: 0, ...options });

/**
 * Polls with `retrieve` until the video has ended, twice a second: an 8 s video on a busy
 * machine can take long enough for faster polls to meet the key's rate limit (120 a minute).
 */
const ended = (client: OpenAI, id: string) =>
  eventually(
    async () => {
      const video = await client.videos.retrieve(id);
      return video.status === "completed" || video.status === "failed" ? video : undefined;
    },
    60_000,
    `video ${id} to end`,
    500,
  );

describe("the openai SDK's videos resource", () => {
  it("creates from an uploaded file, polls to completed, and downloads an MP4 of the length asked for", async () => {
    const tenant = await t.tenant();
    const client = openai(tenant);
    const created = await client.videos.create({
      model: D,
      prompt: fast("a red kite over the dunes"),
      seconds: "4",
      size: "1280x720",
      input_reference: await toFile(png, "kite.png", { type: "image/png" }),
    });
    expect(created).toMatchObject({
      object: "video",
      model: D,
      seconds: "4",
      size: "1280x720",
      progress: 0,
      prompt: fast("a red kite over the dunes"),
      remixed_from_video_id: null,
      completed_at: null,
    });
    // Read back once admitted: a worker may have taken it already.
    expect(["queued", "in_progress"]).toContain(created.status);
    const done = await ended(client, created.id);
    expect(done).toMatchObject({ status: "completed", progress: 100, error: null });
    expect(done.expires_at).toBeGreaterThan(done.completed_at as number);

    const content = await client.videos.downloadContent(created.id);
    expect(content.headers.get("content-type")).toBe("video/mp4");
    const file = join(dir, `${created.id}.mp4`);
    await writeFile(file, Buffer.from(await content.arrayBuffer()));
    expect(await probeDuration(file, { timeoutMs: 10_000 })).toBeCloseTo(4, 0);

    for (const variant of ["thumbnail", "spritesheet"] as const) {
      const image = await client.videos.downloadContent(created.id, { variant });
      expect(image.headers.get("content-type")).toBe("image/jpeg");
      const bytes = Buffer.from(await image.arrayBuffer());
      expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    }

    // The video is a run: the same id in the run API, billed for its 4 seconds, its reference the upload.
    const run = await tenant.call("GET", `/v1/runs/${created.id}`);
    expect(run.body).toMatchObject({ status: "succeeded", endpoint: D, billing: { billable_seconds: 4 } });
    expect(run.body.output.videos[0].thumbnail_url).toMatch(/^http/);
    const search = await tenant.call("POST", "/v1/runs/search", {});
    expect(search.body.data.map((r: { run_id: string }) => r.run_id)).toContain(created.id);
  });

  it("takes {image_url} as a URL and as a data: URL, which becomes an upload of the caller's", async () => {
    const tenant = await t.tenant();
    const client = openai(tenant);
    const byUrl = await client.videos.create({
      model: D,
      prompt: fast(),
      input_reference: { image_url: IMAGE },
    });
    expect(await ended(client, byUrl.id)).toMatchObject({
      status: "completed",
      seconds: "8",
      size: "1280x720",
    });

    const dataUrl = `data:image/png;base64,${png.toString("base64")}`;
    const byData = await client.videos.create({
      model: D,
      prompt: fast(),
      input_reference: { image_url: dataUrl },
    });
    await ended(client, byData.id);
    const run = await tenant.call("GET", `/v1/runs/${byData.id}`);
    expect(run.body.status).toBe("succeeded");
    const stored = await t.refvid.deps.store.getRun(tenant.organizationId, byData.id);
    const [url] = (stored?.input.image_urls ?? []) as string[];
    expect(url).toMatch(/\/v1\/files\/upload_[\w-]+\/content$/);
    const upload = await tenant.call("GET", new URL(url as string).pathname);
    expect(upload.status).toBe(200);
  });

  it("pages through three videos one per page, newest first", async () => {
    const tenant = await t.tenant();
    const client = openai(tenant);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      ids.push(
        (
          await client.videos.create({
            model: D,
            prompt: fast(`take ${n}`),
            input_reference: { image_url: IMAGE },
          })
        ).id,
      );
    }
    const first = await client.videos.list({ limit: 1 });
    expect(first.data.map((v) => v.id)).toEqual([ids[2]]);
    expect(first.has_more).toBe(true);
    const seen: string[] = [];
    for await (const video of client.videos.list({ limit: 1 })) seen.push(video.id);
    expect(seen).toEqual([...ids].reverse());
    const oldest: Video[] = [];
    for await (const video of client.videos.list({ limit: 2, order: "asc" })) oldest.push(video);
    expect(oldest.map((v) => v.id)).toEqual(ids);
  });

  it("remixes a video with a new prompt, and deletes one: gone here, still a run", async () => {
    const tenant = await t.tenant();
    const client = openai(tenant);
    const source = await client.videos.create({
      model: D,
      prompt: fast("first take"),
      seconds: "8",
      size: "720x1280",
      input_reference: { image_url: IMAGE },
    });
    await ended(client, source.id);
    const remix = await client.videos.remix(source.id, { prompt: fast("second take") });
    expect(remix).toMatchObject({
      remixed_from_video_id: source.id,
      model: D,
      seconds: "8",
      size: "720x1280",
    });
    expect((await ended(client, remix.id)).prompt).toBe(fast("second take"));

    expect(await client.videos.delete(source.id)).toEqual({
      id: source.id,
      object: "video.deleted",
      deleted: true,
    });
    await expect(client.videos.retrieve(source.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const list = await client.videos.list();
    expect(list.data.map((v) => v.id)).toEqual([remix.id]);
    expect((await tenant.call("GET", `/v1/runs/${source.id}`)).body.status).toBe("succeeded");
  });

  it("raises BadRequestError naming the parameter a model cannot take", async () => {
    const client = openai(await t.tenant());
    const reference = { image_url: IMAGE };
    const bad = async (params: Partial<OpenAI.Videos.VideoCreateParams>) =>
      client.videos
        .create({
          model: D,
          prompt: fast(),
          input_reference: reference,
          ...params,
        } as OpenAI.Videos.VideoCreateParams)
        .then(
          () => null,
          (err: unknown) => err,
        );
    const seconds = await bad({ seconds: "5" as "4" });
    expect(seconds).toBeInstanceOf(OpenAI.BadRequestError);
    expect(seconds).toMatchObject({ status: 400, param: "seconds", type: "invalid_request_error" });
    expect((seconds as Error).message).toMatch(/4, 6, 8 seconds/);
    expect(await bad({ size: "1024x1792" })).toMatchObject({ param: "size" });
    expect(await bad({ model: "sora-3" as "sora-2" })).toMatchObject({ param: "model" });
    expect(await bad({ prompt: "" })).toMatchObject({ param: "prompt" });
    const unauthorized = await new OpenAI({
      apiKey: "sk-live-nope",
      baseURL: `${t.url}/v1`,
      maxRetries: 0,
    }).videos
      .list()
      .catch((err: unknown) => err);
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it("reaches the SDK as RateLimitError at the concurrency cap, after retries that wait as Retry-After says", async () => {
    const tenant = await t.tenant({ maxConcurrency: 1 });
    const attempts: number[] = [];
    const client = openai(tenant, {
      maxRetries: 2,
      fetch: async (url, init) => {
        if (init?.method === "POST") attempts.push(performance.now());
        return fetch(url, init);
      },
    });
    const params = {
      model: D,
      prompt: slow(),
      input_reference: { image_url: IMAGE },
    };
    const holding = await client.videos.create(params);
    attempts.length = 0;
    const refused = await client.videos.create(params).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused).toMatchObject({ status: 429, code: "concurrency_limit_exceeded" });
    expect(attempts).toHaveLength(3);
    // Retry-After: 1 on each 429: the SDK waited at least that long before each retry.
    expect((attempts[1] as number) - (attempts[0] as number)).toBeGreaterThanOrEqual(900);
    expect((attempts[2] as number) - (attempts[1] as number)).toBeGreaterThanOrEqual(900);
    // Deleting an in-flight video cancels its run, uncharged.
    await client.videos.delete(holding.id);
    const run = await tenant.call("GET", `/v1/runs/${holding.id}`);
    expect(run.body).toMatchObject({ status: "cancelled", billing: { amount: "0.00" } });
  });

  it("works with a test key: the video is made and priced, nothing is taken, and live keys do not see it", async () => {
    const tenant = await t.tenant({ environment: "test", balanceUsd: "0" });
    const client = openai(tenant);
    const video = await client.videos.create({
      model: D,
      prompt: fast(),
      input_reference: { image_url: IMAGE },
    });
    expect(await ended(client, video.id)).toMatchObject({ status: "completed" });
    expect((await client.videos.list()).data.map((v) => v.id)).toEqual([video.id]);
    const account = await tenant.call("GET", "/v1/account");
    expect(account.body.wallet.balance_usd).toBe("0.00");
  });

  it("sends video.completed to the organization's video webhook, verifiable with standardwebhooks", async () => {
    const tenant = await t.tenant();
    const set = await tenant.call("PATCH", "/v1/webhooks/videos", { webhook_url: receiver.url });
    expect(set.body).toEqual({ webhook_url: receiver.url });
    const client = openai(tenant);
    const video = await client.videos.create({
      model: D,
      prompt: fast(),
      input_reference: { image_url: IMAGE },
    });
    await ended(client, video.id);
    const secret = (await tenant.call("GET", "/v1/webhooks/secret")).body.secret as string;
    const request = await eventually(
      async () => receiver.requests.find((r) => r.body.includes(video.id)),
      30_000,
      "the video webhook",
    );
    const event = new Webhook(secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    });
    expect(event).toMatchObject({
      object: "event",
      type: "video.completed",
      data: { id: video.id, status: "completed" },
    });
    const log = await tenant.call("GET", "/v1/webhooks/deliveries");
    expect(log.body.data[0]).toMatchObject({
      run_id: video.id,
      event_type: "video.completed",
      state: "delivered",
    });

    // A video deleted in flight ends cancelled: video.failed, its code telling why.
    const held = await client.videos.create({
      model: D,
      prompt: slow(),
      input_reference: { image_url: IMAGE },
    });
    await client.videos.delete(held.id);
    const failed = await eventually(
      async () => receiver.requests.find((r) => r.body.includes(held.id)),
      30_000,
      "the video.failed webhook",
    );
    expect(JSON.parse(failed.body)).toMatchObject({
      type: "video.failed",
      data: { id: held.id, status: "failed", error: { code: "cancelled" } },
    });
  });
});
