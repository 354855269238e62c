// 10,000 `sync: true` submits held open at once against an API process on Postgres: its RSS
// before and while they wait (no worker runs yet, so every one is held), then a worker ends the
// runs and every submit must be answered with its terminal run.
import { Agent, request } from "node:http";
import pg from "pg";
import { rssOf, SUBMIT, submitInput, tenants } from "./servers.mjs";

export async function syncWaiters(refvid, count) {
  const perOrganization = 100; // the scale tier's cap
  const orgs = await tenants(refvid, Math.ceil(count / perOrganization));
  const [warm] = await tenants(refvid, 1);
  const db = new pg.Client({ connectionString: refvid.database.url });
  await db.connect();
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    // Warm the submit path, then let the heap settle.
    await Promise.all(
      [1, 2, 3, 4, 5].map((i) => submit(refvid.api.url, agent, warm.key, `warm ${i}`, false)),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idle = await rssOf(refvid.api.pid);
    let peak = idle;
    const answers = Array.from({ length: count }, (_, i) =>
      submit(refvid.api.url, agent, orgs[i % orgs.length].key, `held ${i}`, true),
    );
    const settled = Promise.allSettled(answers);
    // Every submit admitted and waiting: count the queued runs.
    const heldSince = Date.now();
    for (;;) {
      peak = Math.max(peak, await rssOf(refvid.api.pid));
      const { rows } = await db.query("select count(*)::int as n from runs where status = 'queued'");
      if (rows[0].n >= count + 5) break;
      if (Date.now() - heldSince > 120_000)
        throw new Error(`only ${rows[0].n - 5} of ${count} runs were admitted`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (let i = 0; i < 10; i++) {
      peak = Math.max(peak, await rssOf(refvid.api.pid));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Held, once the arrival's garbage is gone: V8 gives unused heap back after a few idle seconds.
    let held = await rssOf(refvid.api.pid);
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      held = Math.min(held, await rssOf(refvid.api.pid));
    }
    const started = Date.now();
    await refvid.startWorker({ REFVID_WORKER_CONCURRENCY: "64" });
    const results = await settled;
    const failures = results.filter(
      (r) => !(r.status === "fulfilled" && r.value.status === 201 && r.value.run === "succeeded"),
    );
    const answered = results.length - failures.length;
    return {
      count,
      idle,
      peak,
      extra: peak - idle,
      held,
      heldExtra: held - idle,
      answered,
      drainSeconds: (Date.now() - started) / 1000,
      sample: failures
        .slice(0, 3)
        .map((f) => (f.status === "rejected" ? String(f.reason) : JSON.stringify(f.value))),
    };
  } finally {
    agent.destroy();
    await db.end();
  }
}

function submit(base, agent, key, prompt, sync) {
  const body = JSON.stringify({ input: submitInput(prompt), sync });
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${SUBMIT}`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Key ${key}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on("data", (chunk) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          try {
            resolve({ status: res.statusCode, run: JSON.parse(text).status });
          } catch {
            resolve({ status: res.statusCode, run: text.slice(0, 200) });
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
