/**
 * A real S3-compatible server for the tests that need object storage: OpenStack Swift with its
 * S3 API, started by `scripts/s3-server/start.mjs` (installed first if missing). It checks SigV4
 * signatures as S3 does. A test that needs it and cannot start it fails; it never skips.
 */
import { randomBytes } from "node:crypto";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll } from "vitest";
import type { S3Location } from "../src/files/s3-location.js";

interface StartedS3Server {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

export interface TestS3 {
  /** A fresh bucket on the server, with a prefix of its own. */
  location: S3Location;
  /** The same, as refvid's environment variables. */
  env: Record<string, string>;
}

/** Starts one S3 server for the calling test file, with one bucket; stops it after the file. */
export function useS3Server(): TestS3 {
  let server: StartedS3Server | undefined;
  let started: TestS3 | undefined;
  beforeAll(async () => {
    const { startS3Server } = (await import(
      new URL("../../../scripts/s3-server/start.mjs", import.meta.url).href
    )) as { startS3Server: () => Promise<StartedS3Server> };
    server = await startS3Server();
    const bucket = `refvid-${randomBytes(4).toString("hex")}`;
    const credentials = { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
    const client = new S3Client({
      region: server.region,
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials,
    });
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    client.destroy();
    const prefix = `t${randomBytes(3).toString("hex")}/`;
    started = {
      location: {
        bucket,
        prefix,
        region: server.region,
        endpoint: server.endpoint,
        forcePathStyle: true,
        credentials,
      },
      env: {
        REFVID_BLOB_STORE: `s3://${bucket}/${prefix}`,
        REFVID_S3_ENDPOINT: server.endpoint,
        AWS_REGION: server.region,
        AWS_ACCESS_KEY_ID: server.accessKeyId,
        AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
      },
    };
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
  }, 60_000);
  return new Proxy({} as TestS3, {
    get(_target, property) {
      if (!started) throw new Error("the S3 server starts in beforeAll; use it inside a test or hook");
      return Reflect.get(started, property);
    },
  });
}
