/** `refvid admin orgs|keys|top-up|usage`, with the server's admin token. */
import { describe, expect, inject, it } from "vitest";
import { admin, cells, cli, IMAGE } from "./cli.js";

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
      "--priority",
      "high",
      "--json",
    );
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      max_concurrency: 3,
      rate_limit_per_minute: 500,
      priority: "high",
      name: "ci",
    });
    const weighted = await refvid("admin", "orgs", "update", org.organization_id, "--queue-weight", "4");
    expect(weighted.code).toBe(0);
    expect(weighted.stdout).toMatch(/queue weight\s+4/);

    const asUser = { REFVID_BASE_URL: inject("baseUrl"), REFVID_API_KEY: secret };
    expect((await cli(["account"], { env: asUser })).code).toBe(0);
    const revoked = await refvid("admin", "keys", "revoke", keyId, "--json");
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).not.toBeNull();
    expect((await cli(["account"], { env: asUser })).code).toBe(3);
  });

  it("reports usage with vendor cost and margin, by any grouping, for one organization or all", async () => {
    const org = await admin("POST", "/admin/v1/organizations", { name: "Usage" });
    const id = org.organization_id as string;
    await admin("POST", `/admin/v1/organizations/${id}/top-ups`, { amount_usd: "10.00" });
    const key = await admin("POST", `/admin/v1/organizations/${id}/api-keys`, { environment: "live" });
    const run = async (prompt: string) => {
      const res = await fetch(`${inject("baseUrl")}/v1/run/lab-d/model-d/reference-to-video`, {
        method: "POST",
        headers: { authorization: `Key ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify({ input: { prompt, image_urls: [IMAGE], duration: "4s" }, sync: true }),
      });
      return ((await res.json()) as { status: string }).status;
    };
    expect(await run("[simulate:delay=0] ok")).toBe("succeeded");
    expect(await run("[simulate:delay=0] [simulate:fail] no")).toBe("failed");

    // model-d at 720p, 4 s: 0.284 USD. The simulator costs the operator nothing: the margin is the spend.
    const json = await refvid("admin", "usage", "--group-by", "organization", "--org", id, "--json");
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ group_by: "organization", organization_id: id });
    expect(report.data).toEqual([
      {
        group: id,
        environment: "live",
        runs: { total: 2, queued: 0, processing: 0, succeeded: 1, failed: 1, timeout: 0, cancelled: 0 },
        failures: 1,
        billed_seconds: 4,
        spend_usd: "0.284",
        priced_usd: "0.284",
        vendor_cost_usd: "0.00",
        margin_usd: "0.284",
      },
    ]);

    const shown = await refvid("admin", "usage", "--group-by", "organization", "--org", id, "--from", "1d");
    expect(shown.code, shown.stderr).toBe(0);
    expect(cells(shown.stdout)).toEqual([
      [
        "ORGANIZATION",
        "ENV",
        "RUNS",
        "OK",
        "FAILURES",
        "SECONDS",
        "SPEND USD",
        "PRICED USD",
        "VENDOR COST USD",
        "MARGIN USD",
      ],
      [id, "live", "2", "1", "1", "4", "0.284", "0.284", "0.00", "0.284"],
    ]);
    expect(shown.stdout).toContain(`, ${id}, by organization.`);

    const byRoute = await refvid("admin", "usage", "--group-by", "route", "--org", id);
    expect(byRoute.code, byRoute.stderr).toBe(0);
    expect(cells(byRoute.stdout)[0]?.slice(0, 2)).toEqual(["ROUTE", "ENV"]);
    const everyone = await refvid("admin", "usage");
    expect(everyone.code, everyone.stderr).toBe(0);
    expect(everyone.stdout).toContain("every organization, by model.");
    const empty = await refvid("admin", "usage", "--org", id, "--to", "2020-01-01");
    expect(empty.stdout).toContain("No runs in this window.");
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
    const priority = await refvid("admin", "keys", "create", "org_x", "--priority", "urgent");
    expect(priority.code).toBe(2);
    const weight = await refvid("admin", "orgs", "update", "org_x");
    expect(weight.code).toBe(2);
    expect(weight.stderr).toContain("--queue-weight");
    const grouping = await refvid("admin", "usage", "--group-by", "week");
    expect(grouping.code).toBe(2);
    expect(grouping.stderr).toContain("api_key, model, provider, route, organization, day");
    const from = await refvid("admin", "usage", "--from", "yesterday");
    expect(from.code).toBe(2);
    expect(from.stderr).toContain("Use a date");
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
