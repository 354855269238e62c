/**
 * Which addresses refvid may connect to on a client's behalf (reference downloads, webhooks):
 * none that reach the operator's own network. Each blocked range says why, for error messages.
 */
import { BlockList, isIP } from "node:net";

const V4: [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (carrier-grade NAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "special-purpose"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved or broadcast"],
];
const V6: [string, number, string][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::ffff:0:0", 96, "IPv4-mapped"],
  ["::", 96, "IPv4-compatible"],
  ["64:ff9b::", 96, "NAT64"],
  ["2002::", 16, "6to4"],
  ["2001::", 32, "Teredo"],
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

// One list per range, so a match can name its reason. (A single BlockList would also match IPv4
// addresses against IPv6 rules in mapped form.)
const rules = [
  ...V4.map(([net, prefix, why]) => ({ family: "ipv4" as const, list: list(net, prefix, "ipv4"), why })),
  ...V6.map(([net, prefix, why]) => ({ family: "ipv6" as const, list: list(net, prefix, "ipv6"), why })),
];

function list(net: string, prefix: number, family: "ipv4" | "ipv6"): BlockList {
  const l = new BlockList();
  l.addSubnet(net, prefix, family);
  return l;
}

/** Why an IP address is off limits, or null when it is a public address. */
export function blockedReason(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, "");
  const family = isIP(ip) === 4 ? "ipv4" : isIP(ip) === 6 ? "ipv6" : null;
  if (!family) return "not an IP address";
  const rule = rules.find((r) => r.family === family && r.list.check(ip, family));
  return rule ? `${ip} is ${rule.why}` : null;
}

/** Host names that name the operator's own network whatever DNS says. */
export function blockedHostName(hostname: string): string | null {
  const host = hostname.replace(/\.+$/, "").toLowerCase();
  if (host === "localhost" || /\.(localhost|local|internal|home\.arpa)$/.test(host))
    return `${host} is a local name`;
  return null;
}

/** The reason a URL's host, as written, is off limits; DNS names are checked again when resolved. */
export function blockedHost(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, "");
  return isIP(host) ? blockedReason(host) : blockedHostName(host);
}
