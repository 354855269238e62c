/** `refvid ledger`, `refvid admin top-up|reverse-top-up|adjust|ledger|audit` and key budgets. */
import { describe, expect, inject, it } from "vitest";
import { admin, cli, IMAGE } from "./cli.js";

const adminEnv = () => ({ REFVID_BASE_URL: inject("baseUrl"), REFVID_ADMIN_TOKEN: inject("adminToken") });
const refvid = (...args: string[]) => cli(args, { env: adminEnv() });

describe("money from the terminal", () => {
  it("tops up once per Idempotency-Key, reverses, adjusts, and shows the ledger and the audit log", async () => {
    const org = (await admin("POST", "/admin/v1/organizations", { name: "Ledger" }))
      .organization_id as string;
    const topUp = () => refvid("admin", "top-up", org, "20.00", "--idempotency-key", "inv-1");
    expect((await topUp()).stdout).toMatch(/^Added 20\.00 USD \(top_/);
    const again = await topUp();
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^Already made with this Idempotency-Key: 20\.00 USD/);
    const topUpId = /\((top_[^)]+)\)/.exec(again.stdout)?.[1] as string;

    const adjusted = await refvid("admin", "adjust", org, "--reason", "duplicate credit", "--", "-2.50");
    expect(adjusted.code).toBe(0);
    expect(adjusted.stdout).toMatch(/^Adjusted -2\.50 USD \(led_/);
    expect(adjusted.stdout).toMatch(/balance\s+17\.50 USD/);
    const noReason = await refvid("admin", "adjust", org, "1.00");
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("--reason");

    const tooMuch = await refvid("admin", "reverse-top-up", org, topUpId, "--reason", "refunded");
    expect(tooMuch.code).toBe(3);
    expect(tooMuch.stderr).toContain("available");
    await refvid("admin", "adjust", org, "5.00", "--reason", "goodwill");
    const reversed = await refvid("admin", "reverse-top-up", org, topUpId, "--reason", "refunded");
    expect(reversed.code).toBe(0);
    expect(reversed.stdout).toMatch(/^Reversed -20\.00 USD/);
    expect(reversed.stdout).toMatch(/balance\s+2\.50 USD/);

    const ledger = JSON.parse((await refvid("admin", "ledger", "--org", org, "--all", "--json")).stdout);
    expect(ledger.data.map((e: { kind: string; amount_usd: string }) => [e.kind, e.amount_usd])).toEqual([
      ["reversal", "-20.00"],
      ["adjustment", "5.00"],
      ["adjustment", "-2.50"],
      ["top_up", "20.00"],
    ]);
    const table = await refvid("admin", "ledger", "--org", org, "--kind", "adjustment");
    expect(table.stdout).toContain("goodwill");
    expect(table.stdout).not.toContain("reversal");
    const audit = await refvid("admin", "audit", "--org", org);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/top_up\.reverse/);
    expect(audit.stdout).toMatch(/balance\.adjust/);
  });

  it("gives a key a budget that refuses runs past it, and shows a developer the ledger", async () => {
    const org = (await admin("POST", "/admin/v1/organizations", { name: "Budget" }))
      .organization_id as string;
    await admin("POST", `/admin/v1/organizations/${org}/top-ups`, { amount_usd: "10.00" });
    const created = await refvid("admin", "keys", "create", org, "--budget", "0.30/day", "--json");
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key.budget).toMatchObject({ amount_usd: "0.30", period: "day" });
    const asUser = { REFVID_BASE_URL: inject("baseUrl"), REFVID_API_KEY: key.key };
    const run = (prompt: string) =>
      cli(["run", "model-d", "--prompt", prompt, "--image", IMAGE, "--duration", "4s", "--yes", "--json"], {
        env: asUser,
      });
    expect((await run("first")).code).toBe(0);
    const refused = await run("second");
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("budget");

    const account = await cli(["account"], { env: asUser });
    expect(account.stdout).toMatch(/key budget\s+0\.016 of 0\.30 USD a day left/);
    const ledger = await cli(["ledger", "--kind", "charge,reservation"], { env: asUser });
    expect(ledger.code).toBe(0);
    expect(ledger.stdout).toMatch(/charge\s+.*-0\.284/);
    expect(ledger.stdout).toMatch(/reservation\s+.*0\.284/);

    const removed = await refvid("admin", "keys", "update", key.api_key_id, "--budget", "none", "--json");
    expect(JSON.parse(removed.stdout).budget).toBeNull();
    expect((await refvid("admin", "keys", "update", key.api_key_id, "--budget", "lots")).code).toBe(2);
  });
});
