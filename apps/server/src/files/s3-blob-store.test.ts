import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { useS3Server } from "../../test/s3.js";
import { describeBlobStoreContract } from "./blob-store.contract.js";
import { S3BlobStore } from "./s3-blob-store.js";

const s3 = useS3Server();

// Each store of the suite under a prefix of its own, as the local one gets a fresh directory.
describeBlobStoreContract(
  "S3BlobStore on a real S3-compatible server",
  async () => new S3BlobStore({ ...s3.location, prefix: `c${randomBytes(4).toString("hex")}/` }),
);

describe("S3BlobStore", () => {
  it("is refused by the server with a wrong secret: signatures are checked", async () => {
    const blobs = new S3BlobStore({
      ...s3.location,
      credentials: { accessKeyId: s3.location.credentials?.accessKeyId ?? "", secretAccessKey: "wrong" },
    });
    await expect(blobs.put("upload_wrongsecret1", Readable.from([Buffer.from("x")]))).rejects.toThrow();
    await expect(blobs.check()).rejects.toThrow();
    await expect(new S3BlobStore(s3.location).check()).resolves.toBeUndefined();
  });

  it("keeps blobs under its prefix only", async () => {
    const a = new S3BlobStore({ ...s3.location, prefix: `a${randomBytes(3).toString("hex")}/` });
    const b = new S3BlobStore({ ...s3.location, prefix: `b${randomBytes(3).toString("hex")}/` });
    await a.put("upload_prefixonly01", Readable.from([Buffer.from("a")]), { contentType: "image/png" });
    expect(await b.stat("upload_prefixonly01")).toBeNull();
    expect(await b.deleteOlderThan("upload", new Date(Date.now() + 60_000))).toBe(0);
    expect(await a.stat("upload_prefixonly01")).toEqual({ size: 1, contentType: "image/png" });
  });

  it("creates its bucket when missing, once, and leaves an existing one", async () => {
    const bucket = `made-${randomBytes(4).toString("hex")}`;
    const first = new S3BlobStore({ ...s3.location, bucket, prefix: "" });
    await expect(first.put("upload_nobucket0001", Readable.from([Buffer.from("x")]))).rejects.toThrow();
    expect(await first.ensureBucket()).toBe(true);
    expect(await new S3BlobStore({ ...s3.location, bucket, prefix: "" }).ensureBucket()).toBe(false);
    await first.put("upload_nobucket0001", Readable.from([Buffer.from("x")]));
    expect(await first.stat("upload_nobucket0001")).toMatchObject({ size: 1 });
  });
});
