/**
 * A Cog route's vendor webhooks through the real refvid: with vendor webhooks on, the box's
 * predictions are async (`/readyz` says so) and their webhooks carry the run's token. The body of
 * one is read only once its token verified, and may be far larger than a fal or Replicate webhook:
 * a prediction's end carries its video inline as a data: URL unless the box uploads it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { COG_MODEL_PATH, type CogStack, startCogStack } from "./vendors/cog-stack.js";

let stack: CogStack;

beforeAll(async () => {
  stack = await startCogStack({
    cog: { knobs: { latencyMs: 100, outputSeconds: 2 } },
    route: { only: ["prompt", "duration"], as_number: ["duration"] },
    env: { REFVID_VENDOR_WEBHOOKS: "on" },
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  expect(stack.t.mismatches).toEqual([]);
}, 60_000);

it("an async prediction's webhook: a body over 1 MiB taken once its token verified; a wrong token refused", async () => {
  const input = { prompt: "a webhook", image_urls: ["https://example.com/ref.png"], duration: "4s" };
  const run = (await stack.tenant.call("POST", COG_MODEL_PATH, { input, sync: true })).body;
  expect(run.status).toBe("succeeded");
  const [job] = stack.cog.jobsFor(run.run_id);
  expect(job).toMatchObject({ async: true, webhook: expect.stringContaining(`/${run.run_id}/`) });
  const ready = (await fetch(`${stack.t.url}/readyz`).then((res) => res.json())) as { boxes?: unknown };
  expect(ready.boxes).toEqual({ "gpu-box": { predictions: "async", busy_uncancellable: null } });

  const hookUrl = job?.webhook ?? "";
  const large = JSON.stringify({ id: run.run_id, status: "processing", logs: "x".repeat(2 * 1024 * 1024) });
  const post = (url: string) =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: large });
  const taken = await post(hookUrl);
  expect(taken.status).toBe(200);
  expect(await taken.json()).toEqual({ received: true });
  const forged = await post(`${hookUrl.slice(0, -4)}AAAA`);
  expect(forged.status).toBe(404);
  expect(((await forged.json()) as { error: unknown }).error).toMatchObject({ type: "not_found" });

  const log = (await stack.t.admin("GET", `/admin/v1/runs/${run.run_id}/vendor-log`)).body.data;
  expect(
    log.filter((entry: { kind: string }) => entry.kind === "hook").map((e: { detail: string }) => e.detail),
  ).toEqual(expect.arrayContaining(["succeeded", "processing"]));
});
