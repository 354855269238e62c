/**
 * refvid on a real S3-compatible server (Swift with its S3 API, which checks signatures): an
 * upload streams into the bucket, a run reads it back from there and renders from it, its video
 * (and its poster) is stored in the bucket and served from it (whole and by range) at refvid's own signed URLs or, with
 * REFVID_S3_PRESIGN, at S3 presigned URLs; retention deletes from the bucket.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import type { FileUpload } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { RetentionSweep } from "../src/files/retention.js";
import { startTestRefvid, useTestRefvid } from "./harness.js";
import { useS3Server } from "./s3.js";

const SCULPTURE = fileURLToPath(new URL("../../../docs/examples/refs/sculpture.png", import.meta.url));
const MODEL_D = "lab-d/model-d/reference-to-video";

const s3 = useS3Server();

describe.each([
  ["refvid's signed URLs", false],
  ["S3 presigned URLs", true],
])("files in an S3 bucket, served at %s", (_name, presign) => {
  const env = () => ({
    ...s3.env,
    REFVID_PROVIDER: `${MODEL_D}=preview`,
    ...(presign ? { REFVID_S3_PRESIGN: "true" } : {}),
  });
  // The bucket exists once the S3 server has started, which is before refvid starts.
  const server = useTestRefvid(env);
  const bucket = () =>
    new S3Client({
      region: s3.location.region,
      endpoint: s3.location.endpoint ?? "",
      forcePathStyle: true,
      credentials: s3.location.credentials ?? undefined,
    });

  it("stores an upload and the run's video in the bucket, and serves the video from it", async () => {
    const t = await server.tenant();
    const png = await readFile(SCULPTURE);
    const uploaded = await fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      body: png,
    });
    expect(uploaded.status).toBe(201);
    const file = (await uploaded.json()) as FileUpload;
    const head = await bucket().send(
      new HeadObjectCommand({ Bucket: s3.location.bucket, Key: `${s3.location.prefix}${file.file_id}` }),
    );
    expect(head).toMatchObject({ ContentLength: png.length, ContentType: "image/png" });

    const run = await t.client.run(MODEL_D, {
      prompt: "A slow dolly shot around the sculpture",
      image_urls: [file.url],
      duration: "4s",
    } as never);
    expect(run.status).toBe("succeeded");
    const url = new URL(run.output?.videos[0]?.url as string);
    if (presign) {
      expect(url.origin).toBe(new URL(s3.location.endpoint as string).origin);
      expect(url.searchParams.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
      expect(Number(url.searchParams.get("X-Amz-Expires"))).toBeGreaterThanOrEqual(86_400);
    } else {
      expect(url.origin).toBe(new URL(server.refvid.deps.config.publicUrl).origin);
    }
    const video = await fetch(url);
    expect(video.status).toBe(200);
    expect(video.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await video.arrayBuffer());
    expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp");
    const range = await fetch(url, { headers: { range: "bytes=4-7" } });
    expect(range.status).toBe(206);
    expect(range.headers.get("content-range")).toBe(`bytes 4-7/${bytes.length}`);
    expect(await range.text()).toBe("ftyp");
    if (presign) {
      // S3 checks the signature: a URL with its expiry stretched is refused.
      const stretched = new URL(url);
      stretched.searchParams.set("X-Amz-Expires", "604800");
      expect((await fetch(stretched)).status).toBe(403);
    }
    // Its poster is in the bucket too, a JPEG served at the same kind of URL.
    const thumbnail = new URL(run.output?.videos[0]?.thumbnail_url as string);
    expect(thumbnail.origin).toBe(url.origin);
    const poster = await fetch(thumbnail);
    expect([poster.status, poster.headers.get("content-type")]).toEqual([200, "image/jpeg"]);
    // Nothing was kept on the local disk.
    const local = await readdir(join(server.refvid.deps.config.dataDir, "files")).catch(() => []);
    expect(local).toEqual([]);
  });

  it("retention deletes expired uploads from the bucket", async () => {
    const t = await server.tenant();
    const uploaded = await fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      body: await readFile(SCULPTURE),
    }).then((res) => res.json() as Promise<FileUpload>);
    const { deps } = server.refvid;
    expect(await deps.blobs.stat(uploaded.file_id)).not.toBeNull();
    const later = new Date(Date.now() + (deps.config.uploadTtlHours + 1) * 3_600_000);
    const sweep = new RetentionSweep({ ...deps, clock: { now: () => later } });
    expect(await sweep.sweep()).toBeGreaterThanOrEqual(1);
    expect(await deps.blobs.stat(uploaded.file_id)).toBeNull();
    expect((await t.call("GET", `/v1/files/${uploaded.file_id}/content`)).status).toBe(404);
  });
});

describe("a bucket refvid cannot use", () => {
  it.each([
    ["does not exist", () => ({ ...s3.env, REFVID_BLOB_STORE: "s3://no-such-bucket-here" }), /NoSuchBucket/],
    [
      "refuses the keys",
      () => ({ ...s3.env, AWS_SECRET_ACCESS_KEY: "not-the-secret" }),
      /SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId/,
    ],
  ])("stops the start when it %s, naming REFVID_BLOB_STORE", async (_name, env, why) => {
    const started = startTestRefvid(env());
    await expect(started).rejects.toThrow(/^REFVID_BLOB_STORE: cannot list s3:\/\//);
    await expect(started).rejects.toThrow(why);
  });
});
