/**
 * Submit-time checks of a webhook URL that cost no network I/O (DESIGN.md, "Webhooks"): https
 * only, and no local or private host, unless the operator allows local URLs. The dispatcher checks
 * the resolved address again when it connects.
 */
import { isIP } from "node:net";
import type { FieldProblem } from "@refvid/core";

const FIELD = "body.webhook_url";

export function checkWebhookUrl(text: string, allowLocal: boolean): FieldProblem[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [{ field: FIELD, message: "must be an absolute URL", rule: "format" }];
  }
  if (url.username || url.password) {
    return [
      {
        field: FIELD,
        message: "must not carry credentials; sign deliveries with the webhook secret instead",
        rule: "webhook_url",
      },
    ];
  }
  if (allowLocal)
    return url.protocol === "http:" || url.protocol === "https:"
      ? []
      : [{ field: FIELD, message: "must be http or https", rule: "webhook_url" }];
  if (url.protocol !== "https:")
    return [{ field: FIELD, message: "must be an https URL", rule: "webhook_url" }];
  if (isLocalHost(url.hostname)) {
    return [
      {
        field: FIELD,
        message: `host ${url.hostname} is local or private; webhooks go to public https endpoints`,
        rule: "webhook_url",
      },
    ];
  }
  return [];
}

function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host.endsWith(".internal") ||
    host.endsWith(".local")
  )
    return true;
  if (isIP(host) === 0) return false;
  return (
    /^(127\.|10\.|0\.|169\.254\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.)/.test(
      host,
    ) ||
    host === "::1" ||
    host === "::" ||
    /^(fc|fd|fe80)/.test(host) ||
    host.startsWith("::ffff:")
  );
}
