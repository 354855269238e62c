import { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { useTestRefvid } from "./harness.js";

const t = useTestRefvid();

describe("a run end to end", () => {
  it("is admitted, generated, billed and downloadable", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00" });
    const run = await tenant.client.run(
      "lab-d/model-d/reference-to-video",
      {
        prompt: "a test",
        image_urls: ["https://example.com/a.png"],
        duration: "4s",
      },
      { pollIntervalMs: 50 },
    );
    expect(run.status).toBe("succeeded");
    expect(run.billing).toEqual({
      amount: "0.284",
      currency: "usd",
      unit_price: "0.071",
      billable_seconds: 4,
    });
    const url = run.output?.videos[0]?.url;
    if (!url) throw new Error("no video");
    const video = await fetch(url);
    expect(video.status).toBe(200);
    expect(video.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await video.arrayBuffer());
    expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp");
    const account = await tenant.client.getAccount();
    expect(account.wallet).toMatchObject({
      balance_usd: "9.716",
      reserved_usd: "0.00",
      total_spent_usd: "0.284",
    });
  });
});

describe("the API reference", () => {
  it("is served at /docs", async () => {
    const res = await fetch(`${t.url}/docs/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain("refvid API reference");
  });
});

describe("a wrong method on a known path", () => {
  it("is 405 with an Allow header naming the methods that work", async () => {
    const tenant = await t.tenant();
    const res = await tenant.call("DELETE", "/v1/account");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    expect(res.body.error).toMatchObject({ type: "method_not_allowed", code: 405 });
    expect(res.body.error.message).toMatch(/use GET/);
  });
});

describe("the HTTP server", () => {
  it("makes requests and responses with Express's methods already on their prototypes", async () => {
    // Express would otherwise change each one's prototype (http/express-server.ts).
    const born: [object, object][] = [];
    const record = (req: IncomingMessage, res: ServerResponse) =>
      born.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
    t.refvid.server.prependListener("request", record);
    try {
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    } finally {
      t.refvid.server.off("request", record);
    }
    expect(born).toHaveLength(1);
    const [req, res] = born[0] as [object, object];
    // Compared as booleans: printing a prototype would run Express's getters on it.
    expect(req === IncomingMessage.prototype || res === ServerResponse.prototype).toBe(false);
    expect(Object.hasOwn(req, "get") && Object.hasOwn(res, "json")).toBe(true);
  });
});
