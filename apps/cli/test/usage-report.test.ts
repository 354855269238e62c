/** `refvid usage`: the organization's usage as a table, `--json` as the API gives it, `--csv` as its CSV. */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type Account, admin, cells, cli, IMAGE, newAccount } from "./cli.js";

/** The organization's test key (`account`) and a live key of the same organization. */
let account: Account;
let live: Account;

/** A model-d run at 720p, 4 s (0.284 USD), held until it ends. */
async function run(key: Account, prompt: string): Promise<string> {
  const res = await fetch(`${inject("baseUrl")}/v1/run/lab-d/model-d/reference-to-video`, {
    method: "POST",
    headers: { authorization: `Key ${key.key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: { prompt, image_urls: [IMAGE], duration: "4s" }, sync: true }),
  });
  return ((await res.json()) as { status: string }).status;
}

/** `GET /v1/usage` straight from the API, as `accept` asks. */
async function fromApi(query: string, accept = "application/json"): Promise<string> {
  const res = await fetch(`${inject("baseUrl")}/v1/usage?${query}`, {
    headers: { authorization: `Key ${account.key}`, accept },
  });
  expect(res.status).toBe(200);
  return res.text();
}

beforeAll(async () => {
  account = await newAccount();
  const key = await admin("POST", `/admin/v1/organizations/${account.organizationId}/api-keys`, {
    environment: "live",
  });
  live = { ...account, apiKeyId: key.api_key_id, key: key.key };
  expect(await run(live, "[simulate:delay=0] live ok")).toBe("succeeded");
  expect(await run(live, "[simulate:delay=0] [simulate:fail] live no")).toBe("failed");
  expect(await run(account, "[simulate:delay=0] test ok")).toBe("succeeded");
});

describe("refvid usage", () => {
  it("prints the API's report with --json, by day unless asked", async () => {
    const json = await cli(["usage", "--group-by", "model", "--json"], { env: account.env });
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ group_by: "model", organization_id: account.organizationId });
    expect(report.data).toEqual(JSON.parse(await fromApi("group_by=model")).data);
    expect(report.data).toEqual([
      expect.objectContaining({ environment: "live", failures: 1, spend_usd: "0.284", priced_usd: "0.284" }),
      expect.objectContaining({ environment: "test", failures: 0, spend_usd: "0.00", priced_usd: "0.284" }),
    ]);
    const byDay = JSON.parse((await cli(["usage", "--json"], { env: account.env })).stdout);
    expect(byDay.group_by).toBe("day");
  });

  it("shows a row per key and environment, without the operators' columns", async () => {
    const shown = await cli(["usage", "--group-by", "api_key", "--from", "1d"], { env: account.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`organization ${account.organizationId}, live and test, by api_key.`);
    const rows = [
      [live.apiKeyId, "live", "2", "1", "1", "4", "0.284", "0.284"],
      [account.apiKeyId, "test", "1", "1", "0", "4", "0.00", "0.284"],
    ].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
    expect(cells(shown.stdout)).toEqual([
      ["API_KEY", "ENV", "RUNS", "OK", "FAILURES", "SECONDS", "SPEND USD", "PRICED USD"],
      ...rows,
    ]);
    const empty = await cli(["usage", "--to", "2000-01-01"], { env: account.env });
    expect(empty.stdout).toContain("No runs in this window.");
  });

  it("prints the server's CSV as it is with --csv", async () => {
    const csv = await cli(["usage", "--csv", "--group-by", "api_key"], { env: account.env });
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe(await fromApi("group_by=api_key", "text/csv"));
    expect(csv.stdout.split("\r\n")).toHaveLength(4); // the header, two rows, and the last line's end
  });

  it("refuses bad usage (exit 2) and reports the server's refusal (exit 3)", async () => {
    const both = await cli(["usage", "--csv", "--json"], { env: account.env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("pass one");
    const operatorsOnly = await cli(["usage", "--group-by", "provider"], { env: account.env });
    expect(operatorsOnly.code).toBe(2);
    expect(operatorsOnly.stderr).toContain("Allowed choices are day, model, api_key");
    const backwards = await cli(["usage", "--from", "1d", "--to", "2d"], { env: account.env });
    expect(backwards.code).toBe(3);
    expect(backwards.stderr).toContain("query.from");
    const csvRefused = await cli(["usage", "--csv", "--from", "1d", "--to", "2d"], { env: account.env });
    expect(csvRefused.code).toBe(3);
    expect(csvRefused.stderr).toContain("query.from");
    const noKey = await cli(["usage"], {
      env: { REFVID_BASE_URL: inject("baseUrl"), REFVID_API_KEY: "sk-test-nope" },
    });
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toContain("HTTP 401");
  });
});
