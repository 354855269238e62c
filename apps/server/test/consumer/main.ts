/**
 * A program a new user would write with the published @refvid/client, type-checked with strict
 * `tsc` against the packed tarballs and run against a real server, in Node and in a browser
 * (test/packaging.test.ts). It uses only web APIs, so the same file runs in both.
 */
import {
  createRefvidClient,
  type Model,
  type Run,
  RunFailedError,
  type RunStatus,
  verifyWebhook,
  type WebhookEvent,
} from "@refvid/client";

export interface ConsumerOptions {
  baseUrl: string;
  apiKey: string;
  /** Where refvid delivers the first run's webhook. */
  webhookUrl: string;
  /** The first delivery, as the receiver got it. */
  delivery(): Promise<{ body: string; headers: Record<string, string> }>;
}

export interface ConsumerReport {
  models: string[];
  run: { id: string; status: RunStatus; amount: string | undefined; videoUrl: string | undefined };
  failure: string;
  /** The statuses `onProgress` saw, over the run's live event stream. */
  streamed: string[];
  listed: string[];
  webhook: { type: string; runId: string };
}

export async function main(options: ConsumerOptions): Promise<ConsumerReport> {
  const refvid = createRefvidClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, timeoutMs: 30_000 });
  const models: Model[] = (await refvid.listModels()).data;
  const batch = `b${Date.now()}`;
  const input = { prompt: "Packaged", image_urls: ["https://example.com/a.png"], duration: "4s" as const };

  const streamed: string[] = [];
  const run: Run = await refvid.run("lab-d/model-d/reference-to-video", input, {
    webhookUrl: options.webhookUrl,
    metadata: { batch },
    onProgress: (update) => streamed.push(update.status),
  });
  // The types came through the install: a status is a union of strings, never `any` (a package
  // whose dependency did not resolve turns it into `any`, and this line would then compile).
  // @ts-expect-error a RunStatus is not a number
  const notANumber: number = run.status;
  void notANumber;
  let failure = "resolved";
  try {
    await refvid.run(
      "lab-d/model-d/reference-to-video",
      { ...input, prompt: "Fails [simulate:fail]" },
      { metadata: { batch }, pollIntervalMs: 50 },
    );
  } catch (error) {
    failure = error instanceof RunFailedError ? `RunFailedError ${error.run.status}` : String(error);
  }
  await refvid.submit("lab-d/model-d/reference-to-video", input, { metadata: { batch } });

  // One run per page: the walk follows two cursors.
  const listed: string[] = [];
  for await (const page of refvid.iterateRunPages({ metadata: { batch }, limit: 1 })) {
    listed.push(...page.data.map((r) => r.run_id));
  }

  const { secret } = await refvid.getWebhookSecret();
  const delivery = await options.delivery();
  const event: WebhookEvent = await verifyWebhook(delivery.body, delivery.headers, secret);

  return {
    models: models.map((m) => m.slug),
    run: {
      id: run.run_id,
      status: run.status,
      amount: run.billing?.amount,
      videoUrl: run.output?.videos[0]?.url,
    },
    failure,
    streamed,
    listed,
    webhook: { type: event.type, runId: event.data.run_id },
  };
}
