/**
 * Fetches a URL a client gave us (a reference to download, a webhook to call) without becoming
 * a way into the operator's network: http(s) only; every host name resolved and EVERY address
 * checked before connecting, and the connection pinned to the checked address (so DNS rebinding
 * cannot swap it); each redirect hop checked the same way (or not followed at all); size and time
 * caps that abort early. No proxy variables are consulted.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { createWriteStream } from "node:fs";
import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { naming } from "../storage-full.js";
import { addressRefusal, blockedHostName } from "./address-policy.js";
import { type MinTransferRate, RateFloor, tooSlowMessage } from "./rate-floor.js";

export type RefusalReason =
  | "scheme"
  | "credentials"
  | "blocked_address"
  | "blocked_name"
  | "dns"
  | "too_large"
  | "timeout"
  | "too_slow"
  | "redirects";

/** The fetch was refused or cut off before completing; `message` says why in a user's terms. */
export class FetchRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

export interface GuardOptions {
  /** REFVID_ALLOW_LOCAL_URLS: opens loopback and private addresses, never link-local (metadata). */
  allowLocal: boolean;
  timeoutMs: number;
  /**
   * The slowest a download may be, from the moment the request goes out (rate-floor.ts): slower,
   * it is cut off with `too_slow` before `timeoutMs`. Unset: only the timeout holds.
   */
  minRate?: MinTransferRate | null;
  /** Largest body accepted; larger ones are cut off. */
  maxBytes: number;
  /** Redirect hops to follow; 0 returns the 3xx response itself (webhooks). */
  maxRedirects: number;
  signal?: AbortSignal;
  /** Name resolution, for tests; the default is the system resolver, all addresses. */
  resolve?: (host: string) => Promise<string[]>;
  /** Addresses allowed whatever the policy says, for tests that serve on loopback. */
  allowAddresses?: ReadonlySet<string>;
  /**
   * Writes a 2xx body to this file as it arrives, within `maxBytes`, instead of holding it in
   * memory (large downloads); the response's `body` is then empty.
   */
  toFile?: string;
}

export interface GuardedRequest {
  method?: "GET" | "POST" | "HEAD";
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface GuardedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL of the last hop. */
  url: string;
  body: Buffer;
}

const systemResolve = async (host: string) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

export async function guardedFetch(
  url: string,
  request: GuardedRequest,
  options: GuardOptions,
): Promise<GuardedResponse> {
  let current = url;
  const timeout = AbortSignal.timeout(options.timeoutMs);
  // One floor for the whole fetch, redirects included: a hop that stalls counts against it too.
  const tooSlow = new AbortController();
  let slowMessage = "";
  const minRate = options.minRate;
  const floor = minRate
    ? new RateFloor(minRate, (received) => {
        slowMessage = tooSlowMessage(new URL(current).host, received, minRate);
        tooSlow.abort();
      })
    : null;
  const signal = AbortSignal.any([timeout, tooSlow.signal, ...(options.signal ? [options.signal] : [])]);
  const count = (bytes: number) => floor?.count(bytes);
  let method = request.method ?? "GET";
  let body = request.body;
  try {
    for (let hop = 0; ; hop++) {
      const target = new URL(current);
      const address = await checkTarget(target, options);
      const response = await send(
        target,
        address,
        { ...request, method, body },
        options,
        signal,
        count,
      ).catch((err: unknown) => {
        if (timeout.aborted)
          throw new FetchRefused("timeout", `${target.host} did not answer within ${options.timeoutMs} ms`);
        if (tooSlow.signal.aborted) throw new FetchRefused("too_slow", slowMessage);
        throw err;
      });
      const location = response.headers.location;
      if (response.status >= 300 && response.status < 400 && location && options.maxRedirects > 0) {
        if (hop >= options.maxRedirects)
          throw new FetchRefused("redirects", `more than ${options.maxRedirects} redirects from ${url}`);
        current = new URL(location, target).toString();
        if (
          response.status === 303 ||
          ((response.status === 301 || response.status === 302) && method === "POST")
        ) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      return { ...response, url: current };
    }
  } finally {
    floor?.stop();
  }
}

/** Checks scheme, credentials and every address of the host; returns the address to connect to. */
async function checkTarget(url: URL, options: GuardOptions): Promise<string> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchRefused(
      "scheme",
      `${url.protocol.replace(/:$/, "")} URLs are not fetched; use http or https`,
    );
  }
  if (url.username || url.password)
    throw new FetchRefused("credentials", "URLs with credentials are not fetched");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!isIP(host)) {
    const named = blockedHostName(host);
    if (named && !options.allowLocal) throw new FetchRefused("blocked_name", named);
  }
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await (options.resolve ?? systemResolve)(host);
  } catch {
    throw new FetchRefused("dns", `${host} does not resolve`);
  }
  if (addresses.length === 0) throw new FetchRefused("dns", `${host} does not resolve`);
  for (const address of addresses) {
    if (options.allowAddresses?.has(address)) continue;
    const reason = addressRefusal(address, options.allowLocal);
    if (!reason) continue;
    throw new FetchRefused("blocked_address", isIP(host) ? reason : `${host} resolves to ${reason}`);
  }
  return addresses[0] as string;
}

function send(
  url: URL,
  address: string,
  request: GuardedRequest,
  options: GuardOptions,
  signal: AbortSignal,
  count: (bytes: number) => void,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  // Connect to the address that was checked, whatever DNS says now.
  const pinned: LookupFunction = (_host, opts, callback) => {
    const family = isIP(address);
    if ((opts as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      { method: request.method, headers: request.headers, lookup: pinned, signal, agent: false },
      (res: IncomingMessage) => {
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          res.destroy();
          return reject(
            new FetchRefused(
              "too_large",
              `${url.host} sends ${declared} bytes; the limit is ${options.maxBytes}`,
            ),
          );
        }
        const status = res.statusCode ?? 0;
        if (options.toFile && status >= 200 && status < 300) {
          let size = 0;
          const counter = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              size += chunk.length;
              count(chunk.length);
              if (size > options.maxBytes) {
                done(new FetchRefused("too_large", `${url.host} sent more than ${options.maxBytes} bytes`));
              } else done(null, chunk);
            },
          });
          const toFile = options.toFile;
          pipeline(res, counter, createWriteStream(toFile)).then(
            () => resolve({ status, headers: res.headers, body: Buffer.alloc(0) }),
            (err: unknown) => reject(naming(err, toFile)),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          count(chunk.length);
          if (size > options.maxBytes) {
            res.destroy();
            reject(new FetchRefused("too_large", `${url.host} sent more than ${options.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(request.body);
  });
}
