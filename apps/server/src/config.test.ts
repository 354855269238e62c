import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

describe("loadConfig", () => {
  it("has the defaults of the operator contract", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      store: { kind: "pglite", dir: ".refvid/data" },
      adminToken: null,
      publicUrl: "http://localhost:8080",
      simulatedLatencyMs: 2000,
      runTimeoutMs: 900_000,
      allowLocalUrls: true,
      webhookRetryDelaysMs: [0, 5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      seedDemo: true,
    });
    expect(Object.values(config.providers)).toEqual(["preview", "preview", "preview", "preview"]);
  });

  it("closes local URLs and the demo in production", () => {
    expect(loadConfig({ NODE_ENV: "production" })).toMatchObject({ allowLocalUrls: false, seedDemo: false });
    expect(loadConfig({ NODE_ENV: "production", REFVID_ALLOW_LOCAL_URLS: "true" }).allowLocalUrls).toBe(true);
  });

  it("derives the public URL from the port and trims a trailing slash", () => {
    expect(loadConfig({ PORT: "9000" }).publicUrl).toBe("http://localhost:9000");
    expect(loadConfig({ REFVID_PUBLIC_URL: "https://videos.example.com/" }).publicUrl).toBe(
      "https://videos.example.com",
    );
  });

  it.each([
    [{ PORT: "eighty" }, /PORT/],
    [{ PORT: "70000" }, /PORT/],
    [{ REFVID_ADMIN_TOKEN: "short" }, /REFVID_ADMIN_TOKEN: must be at least 16 characters/],
    [{ REFVID_RUN_TIMEOUT_MS: "-1" }, /REFVID_RUN_TIMEOUT_MS/],
    [{ REFVID_WEBHOOK_RETRY_DELAYS_MS: "0,soon" }, /REFVID_WEBHOOK_RETRY_DELAYS_MS: must be comma-separated/],
    [
      { REFVID_WEBHOOK_RETRY_DELAYS_MS: "1000,5000" },
      /REFVID_WEBHOOK_RETRY_DELAYS_MS: the first entry is the first attempt/,
    ],
    [{ REFVID_ALLOW_LOCAL_URLS: "maybe" }, /REFVID_ALLOW_LOCAL_URLS/],
    [{ REFVID_STORE: "redis" }, /REFVID_STORE: "redis" is not a store/],
    [{ DATABASE_URL: "not a url" }, /DATABASE_URL/],
    [{ DATABASE_URL: "postgres://db/refvid", DATABASE_LISTEN_URL: "not a url" }, /DATABASE_LISTEN_URL/],
    [{ DATABASE_URL: "postgres://db/refvid", REFVID_PG_PREPARED_STATEMENTS: "never" }, /REFVID_PG_PREPARED/],
    [{ DATABASE_URL: "postgres://db/refvid", REFVID_PG_POOL_SIZE: "0" }, /REFVID_PG_POOL_SIZE/],
    [{ DATABASE_LISTEN_URL: "postgres://db/refvid" }, /DATABASE_LISTEN_URL: applies only with DATABASE_URL/],
    [
      { REFVID_PG_PREPARED_STATEMENTS: "false" },
      /REFVID_PG_PREPARED_STATEMENTS: applies only with DATABASE_URL/,
    ],
    [{ REFVID_PROVIDER: "magic" }, /REFVID_PROVIDER: unknown provider "magic"/],
    [{ REFVID_PROVIDER: "lab-z/x/y=simulated" }, /REFVID_PROVIDER: unknown model "lab-z\/x\/y"/],
    [{ REFVID_PUBLIC_URL: "not a url" }, /REFVID_PUBLIC_URL/],
  ])("names the variable when %j is bad", (env, want) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(want);
  });

  it.each([
    [{ REFVID_STORE: "memory" }, { kind: "memory" }],
    [{ REFVID_STORE: "pglite:/var/lib/refvid" }, { kind: "pglite", dir: "/var/lib/refvid" }],
    [{ REFVID_DATA_DIR: "/data" }, { kind: "pglite", dir: "/data/data" }],
    [
      { REFVID_STORE: "memory", DATABASE_URL: "postgres://db/refvid" },
      {
        kind: "postgres",
        url: "postgres://db/refvid",
        listenUrl: "postgres://db/refvid",
        preparedStatements: true,
        poolSize: 10,
      },
    ],
    [
      // Behind PgBouncer in transaction mode (docs/pgbouncer.md).
      {
        DATABASE_URL: "postgres://pgbouncer:6432/refvid",
        DATABASE_LISTEN_URL: "postgres://db:5432/refvid",
        REFVID_PG_PREPARED_STATEMENTS: "false",
        REFVID_PG_POOL_SIZE: "20",
      },
      {
        kind: "postgres",
        url: "postgres://pgbouncer:6432/refvid",
        listenUrl: "postgres://db:5432/refvid",
        preparedStatements: false,
        poolSize: 20,
      },
    ],
  ])("picks the store from %j", (env, want) => {
    expect(loadConfig(env).store).toEqual(want);
  });

  it("takes the preview provider for every model or for some", () => {
    expect(Object.values(loadConfig({ REFVID_PROVIDER: "preview" }).providers)).toEqual([
      "preview",
      "preview",
      "preview",
      "preview",
    ]);
    const some = loadConfig({ REFVID_PROVIDER: "lab-c/model-c/reference-to-video=preview" }).providers;
    expect(some["lab-c/model-c/reference-to-video"]).toBe("preview");
    expect(some["lab-a/model-a/reference-to-video"]).toBe("simulated");
  });

  it.each([
    [
      "model-z=preview",
      /unknown model "model-z" \(models: lab-a\/model-a\/reference-to-video, .*lab-d\/model-d\/reference-to-video\)$/,
    ],
    ["model-a=bogus", /unknown model "model-a" \(models: lab-a\/model-a\/reference-to-video, /],
    [
      "lab-a/model-a/reference-to-video=bogus",
      /unknown provider "bogus" for lab-a\/model-a\/reference-to-video \(providers: simulated, preview\)$/,
    ],
    ["bogus", /unknown provider "bogus" \(providers: simulated, preview; or slug=provider pairs\)$/],
  ])("lists the right choices when REFVID_PROVIDER=%s is bad", (text, want) => {
    const message = (() => {
      try {
        loadConfig({ REFVID_PROVIDER: text });
      } catch (err) {
        return (err as Error).message;
      }
      return "no error";
    })();
    expect(message).toMatch(/^REFVID_PROVIDER: /);
    expect(message).toMatch(want);
    if (/unknown model/.test(message)) expect(message).not.toMatch(/providers:/);
    else expect(message).not.toMatch(/models:/);
  });

  it.each([
    [{}, 25_000],
    [{ REFVID_DRAIN_MS: "0" }, 0],
    [{ REFVID_DRAIN_MS: "3600000" }, 3_600_000],
  ])("drains a stopping process for REFVID_DRAIN_MS given %j", (env, want) => {
    expect(loadConfig(env).drainMs).toBe(want);
  });

  it.each([["-1"], ["25s"], ["3600001"]])("names REFVID_DRAIN_MS when it is %j", (value) => {
    expect(() => loadConfig({ REFVID_DRAIN_MS: value })).toThrow(/REFVID_DRAIN_MS/);
  });

  it("says whether it runs in production", () => {
    expect(loadConfig({}).production).toBe(false);
    expect(loadConfig({ NODE_ENV: "production" }).production).toBe(true);
  });

  it("bounds how long a request may take to arrive and how many connections are open", () => {
    expect(loadConfig({})).toMatchObject({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      maxConnections: 1000,
    });
    expect(
      loadConfig({
        REFVID_REQUEST_TIMEOUT_MS: "5000",
        REFVID_HEADERS_TIMEOUT_MS: "2000",
        REFVID_MAX_CONNECTIONS: "64",
      }),
    ).toMatchObject({ requestTimeoutMs: 5000, headersTimeoutMs: 2000, maxConnections: 64 });
  });

  it.each([
    [{ REFVID_REQUEST_TIMEOUT_MS: "0" }, /REFVID_REQUEST_TIMEOUT_MS/],
    [{ REFVID_HEADERS_TIMEOUT_MS: "soon" }, /REFVID_HEADERS_TIMEOUT_MS/],
    [{ REFVID_MAX_CONNECTIONS: "0" }, /REFVID_MAX_CONNECTIONS/],
    [
      { REFVID_REQUEST_TIMEOUT_MS: "5000", REFVID_HEADERS_TIMEOUT_MS: "6000" },
      /REFVID_HEADERS_TIMEOUT_MS: must not exceed REFVID_REQUEST_TIMEOUT_MS \(5000\)/,
    ],
  ])("names the variable when the HTTP limit %j is bad", (env, want) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(want);
  });

  it("keeps references from pinning the worker: download slots and a minimum transfer rate", () => {
    expect(loadConfig({})).toMatchObject({
      workerConcurrency: 4,
      workerDownloadSlots: 8,
      minDownloadRate: { bytesPerSecond: 32_768, windowMs: 10_000 },
    });
    expect(loadConfig({ REFVID_WORKER_CONCURRENCY: "16" }).workerDownloadSlots).toBe(32);
    expect(
      loadConfig({
        REFVID_WORKER_DOWNLOAD_SLOTS: "3",
        REFVID_MIN_DOWNLOAD_BYTES_PER_S: "1024",
        REFVID_MIN_DOWNLOAD_WINDOW_MS: "5000",
      }),
    ).toMatchObject({ workerDownloadSlots: 3, minDownloadRate: { bytesPerSecond: 1024, windowMs: 5000 } });
    expect(loadConfig({ REFVID_MIN_DOWNLOAD_BYTES_PER_S: "0" }).minDownloadRate).toBeNull();
  });

  it.each([
    [{ REFVID_WORKER_DOWNLOAD_SLOTS: "0" }, /REFVID_WORKER_DOWNLOAD_SLOTS/],
    [{ REFVID_MIN_DOWNLOAD_BYTES_PER_S: "-1" }, /REFVID_MIN_DOWNLOAD_BYTES_PER_S/],
    [{ REFVID_MIN_DOWNLOAD_BYTES_PER_S: "32KiB" }, /REFVID_MIN_DOWNLOAD_BYTES_PER_S/],
    [{ REFVID_MIN_DOWNLOAD_WINDOW_MS: "50" }, /REFVID_MIN_DOWNLOAD_WINDOW_MS/],
    [{ REFVID_MIN_DOWNLOAD_WINDOW_MS: "60000" }, /REFVID_MIN_DOWNLOAD_WINDOW_MS: must be shorter than/],
  ])("names the variable when the download setting %j is bad", (env, want) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(want);
  });

  it("limits one client, one key and slow bodies, with defaults that leave room for others", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      maxConnectionsPerAddress: 200,
      maxRequestsPerKey: 100,
      minBodyRate: { bytesPerSecond: 16_384, windowMs: 10_000 },
      probePort: null,
    });
    expect(config.trustProxy("127.0.0.1", 0)).toBe(false);
    const set = loadConfig({
      REFVID_MAX_CONNECTIONS_PER_ADDRESS: "0",
      REFVID_MAX_REQUESTS_PER_KEY: "0",
      REFVID_MIN_BODY_BYTES_PER_S: "0",
      REFVID_PROBE_PORT: "9090",
      REFVID_TRUST_PROXY: "loopback",
    });
    expect(set).toMatchObject({
      maxConnectionsPerAddress: 0,
      maxRequestsPerKey: 0,
      minBodyRate: null,
      probePort: 9090,
    });
    expect(set.trustProxy("127.0.0.1", 0)).toBe(true);
    expect(
      loadConfig({ REFVID_MIN_BODY_BYTES_PER_S: "1024", REFVID_MIN_BODY_WINDOW_MS: "1000" }).minBodyRate,
    ).toEqual({ bytesPerSecond: 1024, windowMs: 1000 });
  });

  it.each([
    [{ REFVID_MAX_CONNECTIONS_PER_ADDRESS: "-1" }, /REFVID_MAX_CONNECTIONS_PER_ADDRESS/],
    [{ REFVID_MAX_REQUESTS_PER_KEY: "many" }, /REFVID_MAX_REQUESTS_PER_KEY/],
    [{ REFVID_MIN_BODY_BYTES_PER_S: "16k" }, /REFVID_MIN_BODY_BYTES_PER_S/],
    [{ REFVID_MIN_BODY_WINDOW_MS: "10" }, /REFVID_MIN_BODY_WINDOW_MS/],
    [{ REFVID_PROBE_PORT: "70000" }, /REFVID_PROBE_PORT/],
    [{ PORT: "8080", REFVID_PROBE_PORT: "8080" }, /REFVID_PROBE_PORT: must differ from PORT \(8080\)/],
    [{ REFVID_TRUST_PROXY: "proxy.example.com" }, /REFVID_TRUST_PROXY: .*use true, false, a hop count/],
  ])("names the variable when the edge limit %j is bad", (env, want) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(want);
  });

  it("accepts a per-model provider map", () => {
    const config = loadConfig({ REFVID_PROVIDER: "lab-a/model-a/reference-to-video=simulated" });
    expect(config.providers["lab-a/model-a/reference-to-video"]).toBe("simulated");
  });
});

describe("REFVID_BLOB_STORE", () => {
  const keys = { AWS_ACCESS_KEY_ID: "AKIDEXAMPLE", AWS_SECRET_ACCESS_KEY: "secret" };

  it("keeps files in the data directory unless a bucket is named", () => {
    expect(loadConfig({}).blobStore).toEqual({ kind: "local", dir: ".refvid/files" });
    expect(loadConfig({ REFVID_DATA_DIR: "/srv/refvid" }).blobStore).toEqual({
      kind: "local",
      dir: "/srv/refvid/files",
    });
    expect(loadConfig({}).uploadTtlHours).toBe(24);
  });

  it("holds organizations to 5 GiB and 1,000 uploads unless told otherwise", () => {
    expect(loadConfig({}).uploadQuota).toEqual({ bytes: 5_368_709_120, count: 1_000 });
    expect(
      loadConfig({ REFVID_UPLOAD_QUOTA_BYTES: "1048576", REFVID_UPLOAD_QUOTA_COUNT: "0" }).uploadQuota,
    ).toEqual({ bytes: 1_048_576, count: 0 });
  });

  it.each([
    [
      "AWS itself: virtual-hosted, the SDK's credential chain",
      { REFVID_BLOB_STORE: "s3://acme-media", AWS_REGION: "eu-west-3" },
      {
        bucket: "acme-media",
        prefix: "",
        region: "eu-west-3",
        endpoint: null,
        forcePathStyle: false,
        credentials: null,
      },
    ],
    [
      "an S3-compatible server: path-style, keys from the environment, a prefix",
      { REFVID_BLOB_STORE: "s3://refvid/prod/files/", REFVID_S3_ENDPOINT: "http://10.0.0.9:9000", ...keys },
      {
        bucket: "refvid",
        prefix: "prod/files/",
        region: "us-east-1",
        endpoint: "http://10.0.0.9:9000",
        forcePathStyle: true,
        credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
      },
    ],
    [
      "a server that takes virtual-hosted addressing",
      {
        REFVID_BLOB_STORE: "s3://b.example",
        REFVID_S3_ENDPOINT: "https://s3.example.com",
        REFVID_S3_PATH_STYLE: "false",
      },
      { bucket: "b.example", endpoint: "https://s3.example.com", forcePathStyle: false },
    ],
  ])("reads a bucket: %s", (_name, env, location) => {
    expect(loadConfig(env).blobStore).toMatchObject({ kind: "s3", presign: false, location });
  });

  it.each([
    [
      { REFVID_BLOB_STORE: "/mnt/share" },
      /REFVID_BLOB_STORE: "\/mnt\/share" is not a bucket; use s3:\/\/bucket/,
    ],
    [{ REFVID_BLOB_STORE: "s3://Upper_Case" }, /REFVID_BLOB_STORE/],
    [{ REFVID_S3_ENDPOINT: "http://s3:9000" }, /REFVID_S3_ENDPOINT: applies only with REFVID_BLOB_STORE/],
    [{ REFVID_S3_PRESIGN: "true" }, /REFVID_S3_PRESIGN: applies only with REFVID_BLOB_STORE/],
    [{ REFVID_BLOB_STORE: "s3://bkt", AWS_ACCESS_KEY_ID: "x" }, /AWS_SECRET_ACCESS_KEY: set both/],
    [
      { REFVID_BLOB_STORE: "s3://bkt", REFVID_S3_PRESIGN: "true" },
      /REFVID_S3_PRESIGN: presigned URLs are signed with/,
    ],
    [
      {
        REFVID_BLOB_STORE: "s3://bkt",
        REFVID_S3_PRESIGN: "true",
        REFVID_FILE_URL_TTL_SECONDS: "604800",
        ...keys,
      },
      /REFVID_FILE_URL_TTL_SECONDS: must be at most 597600 with REFVID_S3_PRESIGN/,
    ],
    [{ REFVID_UPLOAD_TTL_HOURS: "0" }, /REFVID_UPLOAD_TTL_HOURS/],
    [{ REFVID_UPLOAD_QUOTA_BYTES: "5GiB" }, /REFVID_UPLOAD_QUOTA_BYTES/],
    [{ REFVID_UPLOAD_QUOTA_COUNT: "-1" }, /REFVID_UPLOAD_QUOTA_COUNT/],
  ])("names the variable when %j is bad", (env, want) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(want);
  });

  it("presigns with the keys when asked", () => {
    expect(
      loadConfig({ REFVID_BLOB_STORE: "s3://bkt", REFVID_S3_PRESIGN: "yes", ...keys }).blobStore,
    ).toMatchObject({
      kind: "s3",
      presign: true,
    });
  });
});

describe("REFVID_PROVIDERS_FILE", () => {
  it("reads the routing file at boot, and a bad one stops it naming the path inside the file", async () => {
    const { mkdtemp, writeFile, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = await mkdtemp(join(tmpdir(), "refvid-config-"));
    try {
      const good = join(dir, "providers.yaml");
      await writeFile(
        good,
        "providers:\n  gpu: { type: cog, url: http://10.0.0.5:5000 }\nroutes:\n  lab-d/model-d/reference-to-video: [{ provider: gpu }]\n",
      );
      const config = loadConfig({ REFVID_PROVIDERS_FILE: good, REFVID_UPSTREAM_POLL_MS: "250" });
      expect(config.catalog?.routes["lab-d/model-d/reference-to-video"]?.[0]?.provider.name).toBe("gpu");
      expect(config.upstreamPollMs).toBe(250);
      expect(loadConfig({}).catalog).toBeNull();
      const bad = join(dir, "bad.yaml");
      await writeFile(bad, "providers:\n  fal: { type: fal, token_env: FAL_KEY }\n");
      expect(() => loadConfig({ REFVID_PROVIDERS_FILE: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ REFVID_PROVIDERS_FILE: bad })).toThrow(
        /providers\.fal\.token_env: the environment variable FAL_KEY is not set/,
      );
      expect(() => loadConfig({ REFVID_PROVIDERS_FILE: join(dir, "nope.yaml") })).toThrow(/cannot read/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
