/**
 * Media preflight in the worker: a provider that reads references gets them downloaded and
 * checked first; a bad one fails the run with `invalid_reference_media`, uncharged.
 */
import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestRefvid, type TestRefvid } from "./harness.js";
import { type ReferenceReadingProvider, referenceReading } from "./reference-reading.js";

let t: TestRefvid;
let files: Server;
let base: string;
let provider: ReferenceReadingProvider;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

beforeAll(async () => {
  files = createServer((req, res) => {
    if (req.url === "/ok.png") return res.end(Buffer.concat([PNG, Buffer.alloc(64)]));
    res.writeHead(200, { "content-type": "text/html" }).end("<html>not an image</html>");
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  provider = referenceReading(await mkdtemp(join(tmpdir(), "sim-")));
  t = await startTestRefvid({}, { providers: { "lab-d/model-d/reference-to-video": provider } });
});

afterAll(async () => {
  await t.close();
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
  expect(t.mismatches).toEqual([]);
});

describe("media preflight in the worker", () => {
  it("hands the provider its references, downloaded and identified", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00" });
    const run = await tenant.client.run(
      "lab-d/model-d/reference-to-video",
      { prompt: "p", image_urls: [`${base}/ok.png`], duration: "4s" },
      { pollIntervalMs: 50 },
    );
    expect(run.status).toBe("succeeded");
    const job = provider.jobs.find((j) => j.runId === run.run_id);
    expect(job?.references).toMatchObject([{ kind: "image", format: "png", url: `${base}/ok.png` }]);
  });

  it("fails a run whose reference is not what it claims, charging nothing", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00" });
    const run = await tenant.client.run(
      "lab-d/model-d/reference-to-video",
      { prompt: "p", image_urls: [`${base}/fake.png`], duration: "4s" },
      { pollIntervalMs: 50, throwOnFailure: false },
    );
    expect(run).toMatchObject({
      status: "failed",
      billing: { amount: "0.00" },
      error: { type: "invalid_reference_media", code: 422 },
    });
    expect(run.error?.message).toMatch(
      /input\.image_urls\[0\] \(http:\/\/127\.0\.0\.1:\d+\/fake\.png\) is not a recognised media file/,
    );
    const account = await tenant.client.getAccount();
    expect(account.wallet).toMatchObject({ balance_usd: "10.00", reserved_usd: "0.00" });
  });
});
