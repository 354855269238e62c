/**
 * The operators' lists against the real server: organizations, and an organization's keys and
 * top-ups, newest first, a page at a time by cursor, with their filters.
 */
import { describe, expect, it } from "vitest";
import { keyOf } from "./admin-helpers.js";
import { expectError, expectInvalid } from "./api-fixtures.js";
import { rawRequest, useTestRefvid } from "./harness.js";

const t = useTestRefvid();

/** The ids of `items` in keyset order, newest first by (created_at, id): two made in one millisecond go by id. */
function newestFirst(items: Record<string, string>[], idField: string): string[] {
  return [...items]
    .sort((a, b) =>
      a.created_at !== b.created_at
        ? Date.parse(b.created_at as string) - Date.parse(a.created_at as string)
        : (a[idField] as string) < (b[idField] as string)
          ? 1
          : -1,
    )
    .map((item) => item[idField] as string);
}

/** Every page of an admin GET list, `limit` at a time: the ids of each page, in order. */
async function pagesOf(path: string, idField: string, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await t.admin(
      "GET",
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push(res.body.data.map((item: Record<string, string>) => item[idField]));
    expect(res.body.has_more).toBe(res.body.next_cursor !== null);
    cursor = res.body.next_cursor;
  } while (cursor && pages.length < 20);
  return pages;
}

describe("admin lists", () => {
  it("lists organizations newest first, by name prefix, a page at a time", async () => {
    const prefix = `Lists ${Date.now()}`;
    const orgs = [];
    for (const name of [`${prefix} one`, `${prefix} two`, "Somebody else", `${prefix} three`]) {
      orgs.push((await t.admin("POST", "/admin/v1/organizations", { name })).body);
    }
    const mine = newestFirst([orgs[0], orgs[1], orgs[3]], "organization_id");
    expect(
      await pagesOf(`/admin/v1/organizations?name=${encodeURIComponent(prefix)}`, "organization_id", 2),
    ).toEqual([mine.slice(0, 2), mine.slice(2)]);
    const first = await t.admin("GET", "/admin/v1/organizations?limit=1");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const newest = newestFirst(orgs, "organization_id")[0];
    expect(first.body.data).toEqual([(await t.admin("GET", `/admin/v1/organizations/${newest}`)).body]);
    // The prefix is case-sensitive.
    const lower = await t.admin(
      "GET",
      `/admin/v1/organizations?name=${encodeURIComponent(prefix.toLowerCase())}`,
    );
    expect(lower.body).toEqual({ data: [], has_more: false, next_cursor: null });

    expectInvalid(
      await t.admin("GET", `/admin/v1/organizations?name=x&cursor=${first.body.next_cursor}`),
      "query.cursor",
    );
    expectInvalid(await t.admin("GET", "/admin/v1/organizations?limit=0"), "query.limit");
    expectInvalid(await t.admin("GET", "/admin/v1/organizations?limit=101"), "query.limit");
    const anonymous = await rawRequest(t.url, "GET", "/admin/v1/organizations");
    expectError(anonymous, 401, "unauthorized");
  });

  it("lists an organization's keys newest first, secrets never, revoked ones with revoked_at", async () => {
    const tenant = await t.tenant();
    const test = await keyOf(t, tenant, "test");
    const third = await keyOf(t, tenant, "live");
    const revoked = await t.admin("DELETE", `/admin/v1/api-keys/${test.apiKeyId}`);
    const path = `/admin/v1/organizations/${tenant.organizationId}/api-keys`;
    const listed = await t.admin("GET", path);
    const all = newestFirst(listed.body.data, "api_key_id");
    expect([...all].sort()).toEqual([tenant.apiKeyId, test.apiKeyId, third.apiKeyId].sort());
    expect(await pagesOf(path, "api_key_id", 2)).toEqual([all.slice(0, 2), all.slice(2)]);
    expect(listed.body.data.map((key: { api_key_id: string }) => key.api_key_id)).toEqual(all);
    expect(listed.body.data.find((key: { api_key_id: string }) => key.api_key_id === test.apiKeyId)).toEqual(
      revoked.body,
    );
    expect(revoked.body).toMatchObject({ environment: "test", revoked_at: expect.any(String) });
    const text = JSON.stringify(listed.body);
    for (const key of [tenant, test, third]) expect(text).not.toContain(key.apiKey);
    expect(listed.body.data.every((key: object) => !("key" in key))).toBe(true);

    expect(await pagesOf(`${path}?revoked=true`, "api_key_id", 5)).toEqual([[test.apiKeyId]]);
    const inUse = all.filter((id) => id !== test.apiKeyId);
    expect(await pagesOf(`${path}?revoked=false`, "api_key_id", 1)).toEqual([[inUse[0]], [inUse[1]]]);
    expectInvalid(await t.admin("GET", `${path}?revoked=maybe`), "query.revoked");
    expectError(
      await t.admin("GET", "/admin/v1/organizations/org_nope/api-keys"),
      404,
      "organization_not_found",
    );
  });

  it("lists an organization's top-ups newest first", async () => {
    const tenant = await t.tenant({ balanceUsd: "0" });
    const path = `/admin/v1/organizations/${tenant.organizationId}/top-ups`;
    expect(await t.admin("GET", path)).toEqual({
      status: 200,
      body: { data: [], has_more: false, next_cursor: null },
    });
    const made = [];
    for (const [amount_usd, note] of [
      ["10.00", "first"],
      ["0.5", undefined],
      ["2.25", "third"],
    ] as const) {
      made.push((await t.admin("POST", path, { amount_usd, ...(note ? { note } : {}) })).body);
    }
    const entries = made.map(({ organization: _, ...entry }) => entry);
    expect(entries.map((entry) => [entry.amount_usd, entry.note])).toEqual([
      ["10.00", "first"],
      ["0.50", null],
      ["2.25", "third"],
    ]);
    const newest = newestFirst(entries, "top_up_id");
    expect(await pagesOf(path, "top_up_id", 2)).toEqual([newest.slice(0, 2), newest.slice(2)]);
    const byId = new Map(entries.map((entry) => [entry.top_up_id, entry]));
    expect((await t.admin("GET", path)).body.data).toEqual(newest.map((id) => byId.get(id)));
    expectError(
      await t.admin("GET", "/admin/v1/organizations/org_nope/top-ups"),
      404,
      "organization_not_found",
    );
  });
});
