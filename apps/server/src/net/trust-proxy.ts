/**
 * REFVID_TRUST_PROXY: which peers are reverse proxies, read as Express reads its `trust proxy`
 * setting (https://expressjs.com/en/guide/behind-proxies.html): `true` (every peer), `false`
 * (none), a hop count, or a comma-separated list of addresses, subnets and the names `loopback`,
 * `linklocal` and `uniquelocal`, compiled by the library Express uses (`proxy-addr`). A trusted
 * peer's connections are not counted per address (docs/decisions.md, "Requests at the edge"), and
 * Express reads the client's address from its `X-Forwarded-For`.
 */
import proxyaddr from "proxy-addr";

/** Whether the address `hop` steps from the server (0: the connection's peer) is a trusted proxy. */
export type TrustProxy = (address: string, hop: number) => boolean;

const trustNone: TrustProxy = () => false;

/**
 * The setting as a function, as Express compiles `trust proxy`; unset is `false`. Throws a
 * TypeError naming a bad address (`proxy-addr`'s), for the configuration to report.
 */
export function compileTrustProxy(text: string | undefined): TrustProxy {
  const value = (text ?? "").trim();
  if (value === "" || value === "false") return trustNone;
  if (value === "true") return () => true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return proxyaddr.compile(value.split(",").map((part) => part.trim()));
}
