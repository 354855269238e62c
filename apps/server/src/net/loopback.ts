/** Loopback host names: addresses no other machine (a client, a model vendor) can reach. */
import { isIP } from "node:net";

/** Whether a host name is this machine only: localhost, 127.0.0.0/8, 0.0.0.0, ::1, ::. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "")
    .toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.") || host.startsWith("0.");
  if (isIP(host) === 6) return host === "::1" || host === "::" || /^::ffff:(7f|0:)/.test(host);
  return false;
}
