/**
 * Where an organization's `video.completed` and `video.failed` events go (`/v1/webhooks/videos`):
 * read by any of its keys, changed by a live key. A video takes the URL in force when it is made.
 */
import type { components } from "@refvid/api-types";
import { ForbiddenError, InvalidRequestError, UnauthorizedError } from "@refvid/core";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { checkWebhookUrl } from "./webhook-url.js";

type Settings = components["schemas"]["VideoWebhookSettings"];

export async function getVideoWebhook(deps: AppDeps, caller: Caller): Promise<Settings> {
  const org = await deps.store.getOrganization(caller.organization.id);
  return { webhook_url: (org ?? caller.organization).videoWebhookUrl };
}

export async function updateVideoWebhook(deps: AppDeps, caller: Caller, body: Settings): Promise<Settings> {
  if (caller.apiKey.environment !== "live") {
    throw new ForbiddenError(
      "live_key_required",
      "A test key may read the video webhook URL but not change it: it is the organization's. Use a live key.",
    );
  }
  if (body.webhook_url !== null) {
    const problems = checkWebhookUrl(body.webhook_url, deps.config.allowLocalUrls, "body.webhook_url");
    if (problems.length > 0) throw new InvalidRequestError(problems);
  }
  const org = await deps.store.updateOrganization(caller.organization.id, {
    videoWebhookUrl: body.webhook_url,
  });
  if (!org) throw new UnauthorizedError("This API key's organization no longer exists.");
  return { webhook_url: org.videoWebhookUrl };
}
