// Memory of the server while it takes a reference upload and sends it back: a 20 MB and a 200 MB
// video (200 MB is the largest upload), on the local directory and on an S3 bucket (the local S3
// test server); then the S3 blob store alone with 200 MB and 1 GB, past the upload cap. Each file goes to a fresh server (the built dist/main.js in its own process), so
// every size starts from the same idle state; its resident memory is sampled every 10 ms. The peak
// above idle must not grow with the file: both sizes should cost about the same.
//
//   npm run build && node scripts/bench/upload-memory.mjs
//   BENCH_UPLOAD_MB=20,50,100,200 node scripts/bench/upload-memory.mjs
import { spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { signedHeaders } from "../s3-server/sign.mjs";
import { startS3Server } from "../s3-server/start.mjs";
import { rssOf, startRefvid, tenants } from "./hot-path/servers.mjs";

const MB = 1_000_000;
const SIZES = (process.env.BENCH_UPLOAD_MB ?? "20,200").split(",").map((mb) => Number(mb) * MB);
/** Past the upload cap: the blob store alone, without the server. */
const BLOB_SIZES = (process.env.BENCH_BLOB_MB ?? "200,1000").split(",").map((mb) => Number(mb) * MB);
const BLOB_CHILD = fileURLToPath(new URL("./blob-store-memory.mjs", import.meta.url));

/** An MP4 as far as its first bytes go (an `ftyp` box), then `size` bytes in all. */
async function videoFile(dir, size) {
  const path = join(dir, `v${size}.mp4`);
  const file = await open(path, "w");
  await file.write(Buffer.from("000000186674797069736f6d0000020069736f6d69736f32", "hex"));
  await file.truncate(size);
  await file.close();
  return path;
}

/** Runs `work` while sampling the process's RSS; returns the peak. */
async function peakDuring(pid, work) {
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssOf(pid));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  return peak;
}

function send(url, { method = "GET", headers = {}, file } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks = [];
      let bytes = 0;
      res.on("data", (chunk) => {
        bytes += chunk.length;
        if (bytes < 1e6) chunks.push(chunk);
      });
      res.on("end", () => resolve({ status: res.statusCode, bytes, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    if (file) createReadStream(file).pipe(req);
    else req.end();
  });
}

async function measure(label, env, size) {
  // BENCH_NODE_ARGS is the hot path's: flags such as --cpu-prof would skew the RSS measured here.
  const refvid = await startRefvid("memory", { LOG_LEVEL: "warn", ...env }, { nodeArgs: [] });
  const pid = refvid.api.pid;
  const base = refvid.api.url;
  const files = await mkdtemp(join(tmpdir(), "refvid-mem-files-"));
  try {
    const [{ key }] = await tenants(refvid, 1);
    const path = await videoFile(files, size);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idle = await rssOf(pid);
    let upload;
    const up = await peakDuring(pid, async () => {
      upload = await send(`${base}/v1/files`, {
        method: "POST",
        headers: {
          authorization: `Key ${key}`,
          "content-type": "video/mp4",
          "content-length": String(size),
        },
        file: path,
      });
    });
    if (upload.status !== 201) throw new Error(`upload: ${upload.status} ${upload.body}`);
    const { file_id: id, bytes } = JSON.parse(upload.body);
    if (bytes !== size) throw new Error(`stored ${bytes} of ${size} bytes`);
    let download;
    const down = await peakDuring(pid, async () => {
      download = await send(`${base}/v1/files/${id}/content`, { headers: { authorization: `Key ${key}` } });
    });
    if (download.bytes !== size) throw new Error(`read back ${download.bytes} of ${size} bytes`);
    return { store: label, file: `${size / MB} MB`, idle, up, down };
  } finally {
    await refvid.stop();
    await rm(files, { recursive: true, force: true });
  }
}

/** The S3 blob store alone (no HTTP, no upload cap), in a process of its own. */
async function measureBlobStore(env, size) {
  const child = spawn(process.execPath, [BLOB_CHILD], {
    env: { PATH: process.env.PATH, ...env, BENCH_BLOB_BYTES: String(size) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => {
    out += chunk;
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`blob-store-memory.mjs exited with ${code}`);
  return { file: `${size / MB} MB`, ...JSON.parse(out) };
}

const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
const rows = [];
const blobRows = [];
for (const size of SIZES) rows.push(await measure("local directory", {}, size));
const s3 = await startS3Server();
try {
  const bucket = "refvid-bench";
  const made = await fetch(`${s3.endpoint}/${bucket}`, {
    method: "PUT",
    headers: signedHeaders(s3, { method: "PUT", path: `/${bucket}` }),
  });
  if (made.status !== 200) throw new Error(`could not create the bucket: ${made.status}`);
  const env = {
    REFVID_BLOB_STORE: `s3://${bucket}/bench`,
    REFVID_S3_ENDPOINT: s3.endpoint,
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
  for (const size of SIZES) rows.push(await measure("S3 (Swift)", env, size));
  for (const size of BLOB_SIZES) blobRows.push(await measureBlobStore(env, size));
} finally {
  await s3.stop();
}
console.log("\nServer RSS while a file is uploaded (POST /v1/files) and downloaded (GET …/content)");
console.log("store            file     idle      upload peak (+)        download peak (+)");
for (const r of rows) {
  console.log(
    `${r.store.padEnd(16)} ${r.file.padEnd(8)} ${mib(r.idle).padEnd(9)} ${`${mib(r.up)} (+${mib(r.up - r.idle)})`.padEnd(22)} ${mib(r.down)} (+${mib(r.down - r.idle)})`,
  );
}
for (const store of new Set(rows.map((r) => r.store))) {
  const of = rows.filter((r) => r.store === store);
  const [small, large] = [of[0], of.at(-1)];
  const growth =
    Math.max(large.up - large.idle, large.down - large.idle) -
    Math.max(small.up - small.idle, small.down - small.idle);
  console.log(
    `${store}: ${large.file} costs ${growth >= 0 ? "+" : ""}${mib(growth)} more at peak than ${small.file}`,
  );
}
console.log("\nS3BlobStore alone (its own process): put a generated file, read it back");
console.log("file      idle      put peak (+)           read peak (+)");
for (const r of blobRows) {
  console.log(
    `${r.file.padEnd(9)} ${mib(r.idle).padEnd(9)} ${`${mib(r.put)} (+${mib(r.put - r.idle)})`.padEnd(22)} ${mib(r.get)} (+${mib(r.get - r.idle)})`,
  );
}
