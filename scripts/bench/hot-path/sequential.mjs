// One client, one submit after another, each with a webhook to a receiver in this process: the
// submit's latency, the run's queue pickup (created_at to started_at) and how long after the run
// ended its webhook arrived (completed_at to arrival).
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { SUBMIT, submitInput, summary } from "./servers.mjs";

export async function sequentialSubmits(refvid, tenant, count) {
  const waiting = new Map();
  const receiver = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const arrived = Date.now();
      res.writeHead(204).end();
      const event = JSON.parse(Buffer.concat(chunks).toString());
      waiting.get(event.data.run_id)?.({ arrived, run: event.data });
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const webhookUrl = `http://127.0.0.1:${receiver.address().port}/hook`;
  const submit = [];
  const pickup = [];
  const webhook = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const res = await fetch(`${refvid.api.url}${SUBMIT}`, {
        method: "POST",
        headers: { authorization: `Key ${tenant.key}`, "content-type": "application/json" },
        body: JSON.stringify({
          input: submitInput(`sequential ${i}`),
          webhook_url: webhookUrl,
        }),
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`submit: ${res.status} ${JSON.stringify(body)}`);
      const delivered = new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no webhook for ${body.run_id} in 10 s`)), 10_000);
        waiting.set(body.run_id, (value) => {
          clearTimeout(timer);
          resolve(value);
        });
      });
      submit.push(performance.now() - started);
      const { arrived, run } = await delivered;
      waiting.delete(body.run_id);
      if (run.status !== "succeeded") throw new Error(`run ${run.run_id} ${run.status}`);
      pickup.push(Date.parse(run.started_at) - Date.parse(run.created_at));
      webhook.push(arrived - Date.parse(run.completed_at));
    }
  } finally {
    receiver.close();
  }
  return { submit: summary(submit), pickup: summary(pickup), webhook: summary(webhook) };
}
