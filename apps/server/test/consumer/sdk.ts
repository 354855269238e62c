/** The same consumer's use of the published @refvid/sdk (Node only: it pulls in zod). */
import { type ApiModelSlug, createRefvidSdk } from "@refvid/sdk";

export async function sdkMain(
  baseUrl: string,
  apiKey: string,
): Promise<{ models: ApiModelSlug[]; status: string }> {
  const sdk = createRefvidSdk({ baseUrl, apiKey });
  const { data: models } = await sdk.listModels();
  const { data: run, error } = await sdk.submitModelDRun({
    body: { input: { prompt: "From the SDK", image_urls: ["https://example.com/a.png"] } },
  });
  if (error || !run) throw new Error(`submit failed: ${JSON.stringify(error)}`);
  const { data: polled } = await sdk.getRun({ path: { run_id: run.run_id } });
  return { models: (models?.data ?? []).map((m) => m.slug), status: polled?.status ?? "missing" };
}
