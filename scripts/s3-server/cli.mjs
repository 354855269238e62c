#!/usr/bin/env node
/**
 * A local S3-compatible server (OpenStack Swift with its S3 API) until SIGINT/SIGTERM, with one
 * bucket; prints how to point refvid at it. Installs Swift on first use (as root).
 *
 *   node scripts/s3-server/cli.mjs [--port 9000] [--dir /var/tmp/refvid-s3] [--bucket refvid-media]
 *
 * The keys are new at each start unless AWS_ACCESS_KEY_ID (refvid:<user>) and
 * AWS_SECRET_ACCESS_KEY give them; `--bucket ""` creates no bucket.
 *
 * stdout: one JSON line { endpoint, region, accessKeyId, secretAccessKey, bucket, dir }.
 * With --dir the data and logs (D/log/*.log) stay after it stops; without, they are removed.
 */
import { parseArgs } from "node:util";
import { signedHeaders } from "./sign.mjs";
import { startS3Server } from "./start.mjs";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    dir: { type: "string" },
    bucket: { type: "string", default: "refvid-media" },
  },
});
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
  console.error(`--port must be a TCP port number, not ${values.port}`);
  process.exit(2);
}

const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } = process.env;
const credentials =
  AWS_ACCESS_KEY_ID && AWS_SECRET_ACCESS_KEY
    ? { accessKeyId: AWS_ACCESS_KEY_ID, secretAccessKey: AWS_SECRET_ACCESS_KEY }
    : undefined;
const server = await startS3Server({ port, dir: values.dir, credentials });
const { endpoint, region, accessKeyId, secretAccessKey, dir, stop } = server;
const { bucket } = values;
const created = bucket
  ? await fetch(`${endpoint}/${bucket}`, {
      method: "PUT",
      headers: signedHeaders(server, { method: "PUT", path: `/${bucket}` }),
    })
  : { status: 200 };
if (created.status !== 200) {
  await stop();
  throw new Error(`could not create bucket ${bucket}: HTTP ${created.status} ${await created.text()}`);
}
console.log(JSON.stringify({ endpoint, region, accessKeyId, secretAccessKey, bucket, dir }));
console.error(`S3 server on ${endpoint} with bucket ${bucket}. Point refvid at it:
  export REFVID_S3_ENDPOINT=${endpoint} AWS_REGION=${region} \\
         AWS_ACCESS_KEY_ID='${accessKeyId}' AWS_SECRET_ACCESS_KEY='${secretAccessKey}'
  export REFVID_BLOB_STORE=s3://${bucket}
Logs: ${dir}/log/. Ctrl-C stops it.`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await stop();
    process.exit(0);
  });
}
