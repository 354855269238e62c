/**
 * Run search end to end: pages through next_cursor, each filter, the cursor and limit rules,
 * and the client's iterateRuns, over 25 runs of one organization.
 */
import type { Run } from "@refvid/client";
import { beforeAll, describe, expect, it } from "vitest";
import { BUSY, C, D, expectInvalid, fast, IMAGES, quickD } from "./api-fixtures.js";
import { eventually, type Tenant, useTestRefvid } from "./harness.js";

const t = useTestRefvid();

describe("search", () => {
  let tenant: Tenant;
  const runs: Run[] = [];
  const isFailed = (i: number) => i % 5 === 0;
  const endpointOf = (i: number) => (i % 2 === 0 ? D : C);

  beforeAll(async () => {
    tenant = await t.tenant({ balanceUsd: "400.00", maxConcurrency: 25, ...BUSY });
    for (let i = 0; i < 25; i++) {
      const prompt = fast(`search ${i}${isFailed(i) ? " [simulate:fail]" : ""}`);
      const metadata = { suite: "search", index: String(i), parity: i % 2 === 0 ? "even" : "odd" };
      runs.push(
        endpointOf(i) === D
          ? await tenant.client.submit(D, quickD(prompt), { metadata })
          : await tenant.client.submit(
              C,
              { prompt, reference_image_urls: IMAGES, duration: 1 },
              { metadata },
            ),
      );
    }
    await eventually(
      async () => {
        const page = await tenant.client.searchRuns({ status: ["queued", "processing"] });
        return page.data.length === 0 ? true : undefined;
      },
      20_000,
      "every search run to end",
    );
  });

  const idsOf = (list: Run[]) => list.map((r) => r.run_id);
  const expected = (keep: (i: number) => boolean) =>
    new Set(runs.filter((_r, i) => keep(i)).map((r) => r.run_id));

  it("pages of 10 through next_cursor, newest first", async () => {
    const first = await tenant.client.searchRuns({ limit: 10 });
    expect(first.data).toHaveLength(10);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await tenant.client.searchRuns({ limit: 10, cursor: first.next_cursor ?? "" });
    expect(second.data).toHaveLength(10);
    expect(second.has_more).toBe(true);
    const third = await tenant.client.searchRuns({ limit: 10, cursor: second.next_cursor ?? "" });
    expect(third.data).toHaveLength(5);
    expect(third.has_more).toBe(false);
    expect(third.next_cursor).toBeNull();

    const all = [...first.data, ...second.data, ...third.data];
    expect(new Set(idsOf(all))).toEqual(new Set(idsOf(runs)));
    expect(new Set(idsOf(all)).size).toBe(25);
    const times = all.map((r) => Date.parse(r.created_at));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1] as number);
    // Submitted one after another: with distinct creation times, newest first is the reverse order.
    if (new Set(times).size === times.length) expect(idsOf(all)).toEqual(idsOf(runs).reverse());
    expect(all.every((r) => r.metadata.suite === "search")).toBe(true);
  });

  it("filters by status, endpoint, creation time and metadata", async () => {
    const search = async (filters: Parameters<typeof tenant.client.searchRuns>[0]) =>
      new Set(idsOf((await tenant.client.searchRuns({ limit: 100, ...filters })).data));

    expect(await search({ status: ["failed"] })).toEqual(expected(isFailed));
    expect(await search({ status: ["succeeded"] })).toEqual(expected((i) => !isFailed(i)));
    expect(await search({ status: ["succeeded", "failed"] })).toEqual(expected(() => true));
    expect(await search({ status: ["cancelled"] })).toEqual(new Set());
    expect(await search({ endpoint: C })).toEqual(expected((i) => endpointOf(i) === C));
    expect(await search({ endpoint: D, status: ["failed"] })).toEqual(
      expected((i) => endpointOf(i) === D && isFailed(i)),
    );
    expect(await search({ metadata: { parity: "even" } })).toEqual(expected((i) => i % 2 === 0));
    expect(await search({ metadata: { index: "7" } })).toEqual(expected((i) => i === 7));
    expect(await search({ metadata: { suite: "search", parity: "odd" } })).toEqual(
      expected((i) => i % 2 === 1),
    );
    expect(await search({ metadata: { suite: "other" } })).toEqual(new Set());

    const pivot = runs[12]?.created_at ?? "";
    const at = (i: number) => Date.parse(runs[i]?.created_at ?? "");
    const after = await search({ created_after: pivot });
    const before = await search({ created_before: pivot });
    expect(after).toEqual(expected((i) => at(i) >= Date.parse(pivot)));
    expect(before).toEqual(expected((i) => at(i) < Date.parse(pivot)));
    expect(after.size + before.size).toBe(25);
    expect(after.has(runs[12]?.run_id ?? "")).toBe(true);
    const window = await search({ created_after: runs[5]?.created_at, created_before: pivot });
    expect(window).toEqual(expected((i) => at(i) >= at(5) && at(i) < Date.parse(pivot)));
  });

  it("rejects a cursor used with other filters, a garbage cursor and limits out of 1-100", async () => {
    const first = await tenant.client.searchRuns({ limit: 10 });
    const cursor = first.next_cursor ?? "";
    expectInvalid(
      await tenant.call("POST", "/v1/runs/search", { limit: 10, cursor, status: ["failed"] }),
      "body.cursor",
    );
    expectInvalid(
      await tenant.call("POST", "/v1/runs/search", { limit: 10, cursor, metadata: { parity: "odd" } }),
      "body.cursor",
    );
    expectInvalid(await tenant.call("POST", "/v1/runs/search", { cursor: "garbage" }), "body.cursor");
    expectInvalid(await tenant.call("POST", "/v1/runs/search", { limit: 0 }), "body.limit");
    expectInvalid(await tenant.call("POST", "/v1/runs/search", { limit: 101 }), "body.limit");
    // The page size is not a filter: the same cursor continues with another limit.
    const next = await tenant.call("POST", "/v1/runs/search", { limit: 15, cursor });
    expect(next.status).toBe(201);
    expect(next.body.data).toHaveLength(15);
    expect(next.body.has_more).toBe(false);
  });

  it("iterateRuns collects every run", async () => {
    const collected: Run[] = [];
    for await (const run of tenant.client.iterateRuns({ limit: 10 })) collected.push(run);
    expect(collected).toHaveLength(25);
    expect(new Set(idsOf(collected))).toEqual(new Set(idsOf(runs)));
    const even: Run[] = [];
    for await (const run of tenant.client.iterateRuns({ limit: 4, metadata: { parity: "even" } }))
      even.push(run);
    expect(new Set(idsOf(even))).toEqual(expected((i) => i % 2 === 0));
  });
});
