// Run by upload-memory.mjs in a process of its own: puts a generated file of BENCH_BLOB_BYTES into
// the S3 blob store named by the environment (as the server would be configured), reads it back,
// and prints the peak RSS above idle of each as JSON. Without the HTTP layer, a file can be larger
// than the largest upload, which shows whether a put or a read grows with the file.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { loadConfig } from "../../apps/server/dist/config.js";
import { S3BlobStore } from "../../apps/server/dist/files/s3-blob-store.js";

const size = Number(process.env.BENCH_BLOB_BYTES);
const CHUNK = 64 * 1024;

// The bucket, prefix, endpoint, path style and credentials as the server reads them.
const { blobStore } = loadConfig(process.env);
if (blobStore.kind !== "s3")
  throw new Error("blob-store-memory.mjs: set REFVID_BLOB_STORE=s3://bucket/prefix");
const store = new S3BlobStore(blobStore.location);

/** `size` bytes in 64 KiB chunks, made as they are read, as a client's upload arrives. */
const generated = () => {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const n = Math.min(CHUNK, size - sent);
      sent += n;
      this.push(Buffer.alloc(n, sent & 0xff));
    },
  });
};

async function peakDuring(work) {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage.rss());
}

// Load the SDK's code paths once, so idle includes them.
await store.check();
await new Promise((resolve) => setTimeout(resolve, 200));
const idle = process.memoryUsage.rss();
const id = `upload_bench${Date.now().toString(36)}`;
const put = await peakDuring(async () => {
  const stored = await store.put(id, generated(), { contentType: "video/mp4" });
  if (stored.size !== size) throw new Error(`stored ${stored.size} of ${size} bytes`);
});
let read = 0;
const get = await peakDuring(async () => {
  await pipeline(await store.read(id), async (source) => {
    for await (const chunk of source) read += chunk.length;
  });
});
if (read !== size) throw new Error(`read back ${read} of ${size} bytes`);
await store.delete(id);
store.close();
process.stdout.write(`${JSON.stringify({ idle, put, get })}\n`);
