/**
 * Submit-time checks of a webhook URL that cost no network I/O: https
 * only, and no local, private or special-purpose host, unless the operator allows local URLs.
 * A host NAME that resolves to such an address is caught when delivery connects (guardedFetch).
 * Also: events asked for (`webhook_events`) need a URL.
 */
import type { SubmitRunRequest } from "@refvid/api-types";
import type { FieldProblem } from "@refvid/core";
import { blockedHost } from "../net/address-policy.js";

const FIELD = "body.webhook_url";

export function checkWebhookUrl(text: string, allowLocal: boolean, field = FIELD): FieldProblem[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [{ field, message: "must be an absolute URL", rule: "format" }];
  }
  const problem = (message: string) => [{ field, message, rule: "webhook_url" }];
  if (url.username || url.password)
    return problem("must not carry credentials; deliveries are signed with the webhook secret");
  if (url.protocol !== "https:" && url.protocol !== "http:") return problem("must be an http or https URL");
  if (allowLocal) return [];
  if (url.protocol !== "https:") return problem("must be an https URL");
  if (isLocalHost(url.hostname))
    return problem(`host ${url.hostname} is local or private; webhooks go to public https endpoints`);
  return [];
}

/** `webhook_events` says what a webhook gets: without `webhook_url` there is none to send them to. */
export function checkWebhookEvents(
  body: Pick<SubmitRunRequest, "webhook_url" | "webhook_events">,
): FieldProblem[] {
  if (body.webhook_events === undefined || body.webhook_url !== undefined) return [];
  return [
    {
      field: "body.webhook_events",
      message: "needs a webhook_url to send the events to",
      rule: "dependentRequired",
    },
  ];
}

/** Local names and addresses in every spelling the URL parser leaves (it already folds decimal, octal and hex IPv4). */
export function isLocalHost(hostname: string): boolean {
  return blockedHost(hostname) !== null;
}
