/**
 * Page cursors are the server's own, on every keyset listing: a cursor made by hand the way an
 * unsigned one could be (base64url JSON with the SHA-256 of the filters), one whose time no store
 * can hold, a genuine one altered, and a genuine one of another listing are each a 400 naming the
 * cursor, never a page and never a 500; genuine cursors go on working.
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { BUSY, D, expectInvalid, quickD } from "./api-fixtures.js";
import { type RawResponse, startReceiver, type Tenant, useTestRefvid } from "./harness.js";

const t = useTestRefvid();

interface Listing {
  name: string;
  field: string;
  /** What the listing's filters are, as the server sees them. */
  filters: unknown;
  /** A page of one row, after `cursor` if given. */
  page(cursor?: string): Promise<RawResponse | { status: number; body: any }>;
  status: number;
}

/** A cursor as anyone could make one before cursors were signed: `{t, i, f}`, f the filters' hash. */
const unsigned = (filters: unknown, time: string, id: string) =>
  Buffer.from(
    JSON.stringify({
      t: time,
      i: id,
      f: createHash("sha256").update(JSON.stringify(filters)).digest("base64url").slice(0, 16),
    }),
  ).toString("base64url");

/** The cursor with one character changed. */
const altered = (cursor: string, at: number) =>
  `${cursor.slice(0, at)}${cursor[at] === "A" ? "B" : "A"}${cursor.slice(at + 1)}`;

describe("a page cursor", () => {
  let tenant: Tenant;
  const listings: Listing[] = [];

  beforeAll(async () => {
    tenant = await t.tenant(BUSY);
    await t.tenant(); // a second organization
    const hooks = await startReceiver();
    for (let i = 0; i < 3; i++) {
      const run = await tenant.client.submit(D, quickD(), { webhookUrl: hooks.url });
      await tenant.client.waitForRun(run.run_id, { pollIntervalMs: 20 });
    }
    await hooks.close();
    const query = (cursor?: string) => `?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    listings.push(
      {
        name: "POST /v1/runs/search",
        field: "body.cursor",
        filters: {},
        status: 201,
        page: (cursor) => tenant.call("POST", "/v1/runs/search", { limit: 1, ...(cursor ? { cursor } : {}) }),
      },
      {
        name: "POST /admin/v1/runs/search",
        field: "body.cursor",
        filters: { organization_id: tenant.organizationId },
        status: 200,
        page: (cursor) =>
          t.admin("POST", "/admin/v1/runs/search", {
            organization_id: tenant.organizationId,
            limit: 1,
            ...(cursor ? { cursor } : {}),
          }),
      },
      {
        name: "GET /v1/webhooks/deliveries",
        field: "query.cursor",
        filters: {},
        status: 200,
        page: (cursor) => tenant.call("GET", `/v1/webhooks/deliveries${query(cursor)}`),
      },
      {
        name: "GET /admin/v1/organizations",
        field: "query.cursor",
        filters: {},
        status: 200,
        page: (cursor) => t.admin("GET", `/admin/v1/organizations${query(cursor)}`),
      },
    );
  });

  it("given back as it came continues the listing", async () => {
    for (const listing of listings) {
      const first = await listing.page();
      expect(first.status, listing.name).toBe(listing.status);
      expect(first.body.next_cursor, listing.name).toEqual(expect.any(String));
      const second = await listing.page(first.body.next_cursor);
      expect(second.status, listing.name).toBe(listing.status);
      expect(second.body.data, listing.name).toHaveLength(1);
      expect(second.body.data[0], listing.name).not.toEqual(first.body.data[0]);
    }
  });

  it("made by hand, out of any store's range, altered or of another listing is 400 naming the cursor", async () => {
    const answers: Record<string, number> = {};
    const cursors = new Map<string, string>();
    for (const listing of listings) cursors.set(listing.name, (await listing.page()).body.next_cursor);
    for (const [index, listing] of listings.entries()) {
      const first = await listing.page();
      const last = first.body.data[0];
      const id: string = last.run_id ?? last.id ?? last.organization_id;
      const genuine = cursors.get(listing.name) as string;
      const other = cursors.get((listings[(index + 1) % listings.length] as Listing).name) as string;
      const bad = {
        "made by hand": unsigned(listing.filters, last.created_at, id),
        "made by hand, before 4713 BC": unsigned(listing.filters, "-005000-01-01T00:00:00.000Z", id),
        "made by hand, after 294276 AD": unsigned(listing.filters, "+275000-01-01T00:00:00.000Z", id),
        "altered at its start": altered(genuine, 2),
        "altered at its end": altered(genuine, genuine.length - 1),
        "of another listing": other,
      };
      for (const [what, cursor] of Object.entries(bad)) {
        const res = await listing.page(cursor);
        answers[`${listing.name}: ${what}`] = res.status;
        if (res.status === 400) expectInvalid(res, listing.field, "cursor");
      }
    }
    // Every answer at once, so a failure shows them all.
    expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((key) => [key, 400])));
  });
});
