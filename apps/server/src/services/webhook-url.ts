/**
 * Submit-time checks of a webhook URL that cost no network I/O (DESIGN.md, "Webhooks"): https
 * only, and no local, private or special-purpose host, unless the operator allows local URLs.
 * A host NAME that resolves to such an address is only caught by a fetch that checks the address
 * it connects to; delivery does not do that yet, so this is a first line, not the whole defence.
 */
import { BlockList, isIP } from "node:net";
import type { FieldProblem } from "@refvid/core";

const FIELD = "body.webhook_url";

// Two lists: a BlockList also matches IPv4 addresses against IPv6 rules in their mapped form.
const blockedV4 = new BlockList();
const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 3], // multicast, reserved and broadcast
] as const) {
  blockedV4.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 127], // unspecified and loopback
  ["::ffff:0:0", 96], // IPv4-mapped
  ["::", 96], // IPv4-compatible
  ["64:ff9b::", 96], // NAT64
  ["2002::", 16], // 6to4
  ["2001::", 32], // Teredo
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local
  ["ff00::", 8], // multicast
] as const) {
  blockedV6.addSubnet(net, prefix, "ipv6");
}

export function checkWebhookUrl(text: string, allowLocal: boolean): FieldProblem[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [{ field: FIELD, message: "must be an absolute URL", rule: "format" }];
  }
  const problem = (message: string) => [{ field: FIELD, message, rule: "webhook_url" }];
  if (url.username || url.password)
    return problem("must not carry credentials; deliveries are signed with the webhook secret");
  if (url.protocol !== "https:" && url.protocol !== "http:") return problem("must be an http or https URL");
  if (allowLocal) return [];
  if (url.protocol !== "https:") return problem("must be an https URL");
  if (isLocalHost(url.hostname))
    return problem(`host ${url.hostname} is local or private; webhooks go to public https endpoints`);
  return [];
}

/** Local names and addresses in every spelling the URL parser leaves (it already folds decimal, octal and hex IPv4). */
export function isLocalHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();
  if (host === "localhost" || /\.(localhost|local|internal|home\.arpa)$/.test(host)) return true;
  const family = isIP(host);
  if (family === 4) return blockedV4.check(host, "ipv4");
  if (family === 6) return blockedV6.check(host, "ipv6");
  return false;
}
