/**
 * Which addresses refvid may connect to on a client's behalf (reference downloads, webhooks):
 * none that reach the operator's own network. The ranges are every entry of the IANA IPv4 and
 * IPv6 special-purpose address registries that is not globally reachable, the IPv6 forms that
 * embed an IPv4 address (which would slip a private IPv4 address past the IPv4 rules), and cloud
 * metadata services; on IPv6 only global unicast (2000::/3) is reachable at all. Each range says
 * why, for error messages, and whether REFVID_ALLOW_LOCAL_URLS opens it: loopback and private
 * networks (a developer's machine and LAN) open; link-local and metadata never do.
 */
import { BlockList, isIP } from "node:net";

/** [network, prefix length, why, opened by REFVID_ALLOW_LOCAL_URLS]; the first match names the reason. */
type Range = [string, number, string, boolean];

const V4: Range[] = [
  ["0.0.0.0", 8, "unspecified ('this network')", false],
  ["10.0.0.0", 8, "private", true],
  ["100.100.100.200", 32, "cloud metadata (Alibaba Cloud)", false],
  ["100.64.0.0", 10, "shared address space (carrier-grade NAT)", true],
  ["127.0.0.0", 8, "loopback", true],
  ["169.254.0.0", 16, "link-local (cloud metadata)", false],
  ["172.16.0.0", 12, "private", true],
  ["192.0.0.0", 24, "reserved for IETF protocol assignments", true],
  ["192.0.2.0", 24, "documentation (TEST-NET-1)", false],
  ["192.88.99.0", 24, "the deprecated 6to4 relay anycast", false],
  ["192.168.0.0", 16, "private", true],
  ["198.18.0.0", 15, "benchmarking", true],
  ["198.51.100.0", 24, "documentation (TEST-NET-2)", false],
  ["203.0.113.0", 24, "documentation (TEST-NET-3)", false],
  ["224.0.0.0", 4, "multicast", false],
  ["255.255.255.255", 32, "limited broadcast", false],
  ["240.0.0.0", 4, "reserved", false],
];
const V6: Range[] = [
  ["::", 128, "unspecified", false],
  ["::1", 128, "loopback", true],
  ["::ffff:0:0", 96, "IPv4-mapped", false],
  ["::ffff:0:0:0", 96, "IPv4-translated", false],
  ["::", 96, "IPv4-compatible", false],
  ["64:ff9b::", 96, "NAT64", false],
  ["64:ff9b:1::", 48, "local-use NAT64", false],
  ["100::", 64, "discard-only", false],
  ["100:0:0:1::", 64, "a dummy prefix", false],
  ["2001::", 32, "Teredo", false],
  ["2001:2::", 48, "benchmarking", true],
  ["2001::", 23, "reserved for IETF protocol assignments", false],
  ["2001:db8::", 32, "documentation", false],
  ["2002::", 16, "6to4", false],
  ["3fff::", 20, "documentation", false],
  ["5f00::", 16, "segment routing (SRv6) identifiers", false],
  ["fd00:ec2::", 32, "cloud metadata (AWS)", false],
  ["fc00::", 7, "unique-local", true],
  ["fe80::", 10, "link-local", false],
  ["fec0::", 10, "site-local", true],
  ["ff00::", 8, "multicast", false],
];

interface Rule {
  family: "ipv4" | "ipv6";
  list: BlockList;
  why: string;
  local: boolean;
}

// One list per range, so a match can name its reason. (A single BlockList would also match IPv4
// addresses against IPv6 rules in mapped form.)
const rules: Rule[] = [
  ...V4.map(([net, prefix, why, local]) => rule("ipv4", net, prefix, why, local)),
  ...V6.map(([net, prefix, why, local]) => rule("ipv6", net, prefix, why, local)),
];
const globalUnicast = new BlockList();
globalUnicast.addSubnet("2000::", 3, "ipv6");

function rule(family: Rule["family"], net: string, prefix: number, why: string, local: boolean): Rule {
  const list = new BlockList();
  list.addSubnet(net, prefix, family);
  return { family, list, why, local };
}

function classify(address: string): { why: string; local: boolean } | null {
  const ip = address.replace(/^\[|\]$/g, "");
  const family = isIP(ip) === 4 ? "ipv4" : isIP(ip) === 6 ? "ipv6" : null;
  if (!family) return { why: `${ip} is not an IP address`, local: false };
  const match = rules.find((r) => r.family === family && r.list.check(ip, family));
  if (match) return { why: `${ip} is ${match.why}`, local: match.local };
  if (family === "ipv6" && !globalUnicast.check(ip, "ipv6"))
    return { why: `${ip} is not a global unicast address (outside 2000::/3)`, local: false };
  return null;
}

/** Why an IP address is off limits, or null when it is a public address. */
export function blockedReason(address: string): string | null {
  return classify(address)?.why ?? null;
}

/**
 * Why refvid may not connect to an address, or null when it may. `allowLocal`
 * (REFVID_ALLOW_LOCAL_URLS) opens loopback and private networks, never link-local or metadata.
 */
export function addressRefusal(address: string, allowLocal: boolean): string | null {
  const found = classify(address);
  return found && !(allowLocal && found.local) ? found.why : null;
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
