/** `refvid admin orgs|keys|top-up`, with the server's admin token. */
import { describe, expect, inject, it } from "vitest";
import { cli } from "./cli.js";

const adminEnv = () => ({ REFVID_BASE_URL: inject("baseUrl"), REFVID_ADMIN_TOKEN: inject("adminToken") });
const refvid = (...args: string[]) => cli(args, { env: adminEnv() });

describe("refvid admin", () => {
  it("creates and reads an organization, tops it up, and manages a key that then works", async () => {
    const created = await refvid("admin", "orgs", "create", "Acme Studios", "--json");
    expect(created.code).toBe(0);
    const org = JSON.parse(created.stdout);
    expect(org).toMatchObject({ name: "Acme Studios", tier: "starter" });

    const topUp = await refvid("admin", "top-up", org.organization_id, "400.00", "--note", "invoice 7");
    expect(topUp.code).toBe(0);
    expect(topUp.stdout).toMatch(/^Added 400\.00 USD \(top_/);
    expect(topUp.stdout).toMatch(/tier\s+growth \(25 runs at once\)/);

    const got = JSON.parse((await refvid("admin", "orgs", "get", org.organization_id, "--json")).stdout);
    expect(got.wallet.balance_usd).toBe("400.00");

    const keyResult = await refvid(
      "admin",
      "keys",
      "create",
      org.organization_id,
      "--environment",
      "test",
      "--name",
      "ci",
    );
    expect(keyResult.code).toBe(0);
    const secret = /key\s+(sk-test-\S+)/.exec(keyResult.stdout)?.[1] as string;
    expect(secret).toBeDefined();
    expect(keyResult.stderr).toContain("Store the key now");
    const keyId = /api key\s+(key_\S+)/.exec(keyResult.stdout)?.[1] as string;

    const updated = await refvid(
      "admin",
      "keys",
      "update",
      keyId,
      "--max-concurrency",
      "3",
      "--rate-limit",
      "500",
      "--json",
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      max_concurrency: 3,
      rate_limit_per_minute: 500,
      name: "ci",
    });

    const asUser = { REFVID_BASE_URL: inject("baseUrl"), REFVID_API_KEY: secret };
    expect((await cli(["account"], { env: asUser })).code).toBe(0);
    const revoked = await refvid("admin", "keys", "revoke", keyId, "--json");
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).not.toBeNull();
    expect((await cli(["account"], { env: asUser })).code).toBe(3);
  });

  it("refuses bad input before asking the server (exit 2)", async () => {
    const amount = await refvid("admin", "top-up", "org_x", "ten");
    expect(amount.code).toBe(2);
    expect(amount.stderr).toContain("Use a decimal amount like 100.00");
    const nothing = await refvid("admin", "keys", "update", "key_x");
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("nothing to change");
    const env = await refvid("admin", "keys", "create", "org_x", "--environment", "staging");
    expect(env.code).toBe(2);
  });

  it("reports the API's errors (exit 3) and a missing token (exit 2)", async () => {
    const missing = await refvid("admin", "orgs", "get", "org_missing");
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/organization_not_found, HTTP 404/);
    const wrongToken = await cli(["admin", "orgs", "create", "X"], {
      env: { ...adminEnv(), REFVID_ADMIN_TOKEN: "not-the-admin-token" },
    });
    expect(wrongToken.code).toBe(3);
    expect(wrongToken.stderr).toMatch(/HTTP 401/);
    const noToken = await cli(["admin", "orgs", "create", "X"], {
      env: { REFVID_BASE_URL: inject("baseUrl") },
    });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("REFVID_ADMIN_TOKEN");
  });
});
