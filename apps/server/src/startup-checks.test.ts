import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";
import { startupFindings } from "./startup-checks.js";

const token = "0123456789abcdef0123";
const ready = {
  NODE_ENV: "production",
  DATABASE_URL: "postgres://db/refvid",
  REFVID_ADMIN_TOKEN: token,
  REFVID_PUBLIC_URL: "https://videos.example.com",
  REFVID_METRICS_TOKEN: "scrape-0123456789abcdef",
};
const findings = (env: Record<string, string | undefined>) => startupFindings(loadConfig(env));

describe("startupFindings", () => {
  it("finds nothing outside production, whatever the set-up", () => {
    expect(findings({})).toEqual({ errors: [], warnings: [] });
    expect(findings({ REFVID_STORE: "memory", REFVID_PUBLIC_URL: "http://127.0.0.1:8080" })).toEqual({
      errors: [],
      warnings: [],
    });
  });

  it("finds nothing in a production set-up on Postgres with an https public URL", () => {
    expect(findings(ready)).toEqual({ errors: [], warnings: [] });
  });

  it("warns that /metrics is open without REFVID_METRICS_TOKEN in production", () => {
    const { errors, warnings } = findings({ ...ready, REFVID_METRICS_TOKEN: undefined });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^GET \/metrics is open .*REFVID_METRICS_TOKEN/)]);
  });

  it.each(["all", "api"])("needs REFVID_ADMIN_TOKEN for role %s in production", (role) => {
    const { errors } = findings({ ...ready, REFVID_ADMIN_TOKEN: undefined, REFVID_ROLE: role });
    expect(errors).toEqual([expect.stringMatching(/^REFVID_ADMIN_TOKEN is not set/)]);
  });

  it("does not need REFVID_ADMIN_TOKEN for a worker", () => {
    expect(findings({ ...ready, REFVID_ADMIN_TOKEN: undefined, REFVID_ROLE: "worker" }).errors).toEqual([]);
  });

  it.each([
    undefined,
    "http://localhost:8080",
    "https://api.localhost",
    "http://127.0.0.1",
    "http://127.8.9.10:9000",
    "http://0.0.0.0:8080",
    "http://[::1]:8080",
    "http://[::ffff:127.0.0.1]",
  ])("refuses the loopback public URL %s, for every role", (url) => {
    for (const role of ["all", "api", "worker"]) {
      const { errors } = findings({ ...ready, REFVID_PUBLIC_URL: url, REFVID_ROLE: role });
      expect(errors).toEqual([expect.stringMatching(/^REFVID_PUBLIC_URL is .*loopback/)]);
    }
  });

  it.each(["http://videos.example.com", "http://10.0.0.5:8080"])(
    "warns about the plain-http public URL %s",
    (url) => {
      const { errors, warnings } = findings({ ...ready, REFVID_PUBLIC_URL: url });
      expect(errors).toEqual([]);
      expect(warnings).toEqual([expect.stringMatching(/^REFVID_PUBLIC_URL is plain http .*https/)]);
    },
  );

  it.each([
    [
      { DATABASE_URL: undefined },
      /^embedded store \(PGlite in \.refvid\/data\): one process only, no scale-out; set DATABASE_URL/,
    ],
    [{ DATABASE_URL: undefined, REFVID_STORE: "memory" }, /^memory store: .*set DATABASE_URL/],
  ])("warns about a store that cannot scale out: %j", (env, want) => {
    const { errors, warnings } = findings({ ...ready, ...env });
    expect(errors).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(want)]);
  });
});
