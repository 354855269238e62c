/**
 * REFVID_MAX_CONNECTIONS_PER_ADDRESS: how many connections one client address may hold open, so
 * that one client cannot take every one of REFVID_MAX_CONNECTIONS (docs/decisions.md, "Requests
 * at the edge"). Counted as connections are accepted, before a byte is read: a connection past
 * the limit is closed at once, as one past REFVID_MAX_CONNECTIONS is.
 *
 * The address is the connection's peer. A peer REFVID_TRUST_PROXY trusts is a reverse proxy
 * carrying many clients, so its connections are not counted; the client it names in
 * `X-Forwarded-For` is known only once a request's headers are in, too late for a limit on
 * connections. An IPv6 client is counted by its /64, the block one host is usually given.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import ipaddr from "ipaddr.js";
import type { TrustProxy } from "../net/trust-proxy.js";

/** What one client's connections are counted under: an IPv4 address, or an IPv6 /64. */
export function addressGroup(address: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address); // an IPv4-mapped IPv6 address is its IPv4 one
  } catch {
    return address;
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(":")}::/64`;
}

export interface AddressLimit {
  /** Connections one address may hold; 0 is no limit. */
  maxConnectionsPerAddress: number;
  trustProxy: TrustProxy;
}

/**
 * Closes each connection to `server` that would take its address past the limit, and tells
 * `onRefused` the address. Returns how many connections each address holds (tests, logs).
 */
export function limitConnectionsPerAddress(
  server: Server,
  limit: AddressLimit,
  onRefused?: (group: string) => void,
): ReadonlyMap<string, number> {
  const open = new Map<string, number>();
  if (limit.maxConnectionsPerAddress <= 0) return open;
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined || socket.destroyed || limit.trustProxy(address, 0)) return;
    const group = addressGroup(address);
    const held = open.get(group) ?? 0;
    if (held >= limit.maxConnectionsPerAddress) {
      socket.destroy();
      onRefused?.(group);
      return;
    }
    open.set(group, held + 1);
    socket.once("close", () => {
      const left = (open.get(group) ?? 1) - 1;
      if (left > 0) open.set(group, left);
      else open.delete(group);
    });
  });
  return open;
}
