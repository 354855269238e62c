/**
 * Requests held across a process's shutdown, for the drain tests: sync submits whose bodies come
 * later, requests whose headers are finished only after the signal, and the process's exit.
 */
import { connect as tcpConnect } from "node:net";
import { expect } from "vitest";
import { eventually } from "./harness.js";
import type { RefvidProcess } from "./processes.js";

export const SUBMIT = "/v1/run/lab-d/model-d/reference-to-video";
export const input = (prompt: string) => ({
  prompt,
  image_urls: ["https://example.com/a.png"],
  duration: "4s",
});

/** A sync submit's body: the parsed JSON when it arrived whole, else what went wrong reading it. */
export type HeldBody = { ok: true; json: any } | { ok: false; error: string; text?: string };

export interface HeldSubmit {
  status: number;
  runId: string;
  body: Promise<HeldBody>;
}

/** Sends a sync submit and resolves once its status line and headers are in (the run is admitted). */
export async function holdSync(baseUrl: string, apiKey: string, prompt: string): Promise<HeldSubmit> {
  const res = await fetch(`${baseUrl}${SUBMIT}`, {
    method: "POST",
    headers: { authorization: `Key ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ input: input(prompt), sync: true }),
  });
  const body = res.text().then(
    (text): HeldBody => {
      try {
        return { ok: true, json: JSON.parse(text) };
      } catch (err) {
        return { ok: false, error: String(err), text };
      }
    },
    (err: unknown): HeldBody => ({ ok: false, error: `${err} (${(err as Error).cause ?? ""})` }),
  );
  return { status: res.status, runId: res.headers.get("x-run-id") ?? "", body };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * A request on a connection opened now, its headers left unfinished (and read by the server):
 * `finish()` sends the blank line that ends them and reads the answer. The connection is busy
 * meanwhile, as one of a proxy's pool in mid-request would be, so a server that stops listening
 * does not close it as idle.
 */
export async function unfinishedRequest(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ finish(): Promise<RawAnswer> }> {
  const socket = tcpConnect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const lines = Object.entries({ host: `127.0.0.1:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`GET ${path} HTTP/1.1\r\n${lines.join("")}`);
  // The server has read those bytes once a request sent after them, on another connection, is
  // answered; before that the connection could pass for idle, which a stopping server closes.
  await fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.arrayBuffer());
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("utf8");
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("error", () => {});
  return {
    async finish() {
      socket.write("\r\n");
      // Whole once the headers and Content-Length bytes are in, or when the connection closes.
      const answer = await Promise.race([
        closed.then(() => parseAnswer(received)),
        eventually(async () => parseAnswer(received), 30_000, `an answer to GET ${path}`),
      ]);
      if (!answer) throw new Error(`no whole answer to GET ${path}: ${JSON.stringify(received)}`);
      socket.destroy();
      return answer;
    },
  };
}

function parseAnswer(text: string): RawAnswer | undefined {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [statusLine = "", ...headerLines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(end + 4);
  const length = Number(headers["content-length"] ?? Number.NaN);
  if (!(Buffer.byteLength(body) >= length)) return undefined;
  return { status: Number(statusLine.split(" ")[1]), headers, body: JSON.parse(body) };
}

/** Whether a new connection to `port` is refused now. */
export function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

/** The process's exit code (null when a signal ended it). */
export function exitCode(p: RefvidProcess): Promise<number | null> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return Promise.resolve(p.child.exitCode);
  return new Promise((resolve) => p.child.once("exit", (code) => resolve(code)));
}

/** Sets up an organization on the growth tier (25 runs in flight) with one key that may poll freely. */
export async function tenant(p: RefvidProcess, adminToken: string): Promise<string> {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${p.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as any;
  };
  const org = await call("/admin/v1/organizations", { name: "drain" });
  await call(`/admin/v1/organizations/${org.organization_id}/top-ups`, { amount_usd: "400.00" });
  const key = await call(`/admin/v1/organizations/${org.organization_id}/api-keys`, {
    max_concurrency: 25,
    rate_limit_per_minute: 100_000,
  });
  return key.key as string;
}

/** The run as `p` shows it. */
export async function runOf(p: RefvidProcess | { url: string }, apiKey: string, runId: string): Promise<any> {
  const res = await fetch(`${p.url}/v1/runs/${runId}`, { headers: { authorization: `Key ${apiKey}` } });
  return res.json();
}

/** Polls the held submits' runs on `p` until `done(runs)` holds. */
export function untilRuns(
  p: RefvidProcess,
  apiKey: string,
  held: readonly HeldSubmit[],
  done: (runs: any[]) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<any[]> {
  return eventually(
    async () => {
      const runs = await Promise.all(held.map((h) => runOf(p, apiKey, h.runId)));
      return done(runs) ? runs : undefined;
    },
    timeoutMs,
    what,
  );
}

/** Every held submit was answered with a whole JSON body: its run, in one of `statuses`. */
export async function expectAnswered(
  held: readonly HeldSubmit[],
  statuses: readonly string[],
): Promise<void> {
  const bodies = await Promise.all(held.map((h) => h.body));
  for (const [i, body] of bodies.entries()) {
    expect(body, JSON.stringify(body)).toMatchObject({ ok: true, json: { run_id: held[i]?.runId } });
    expect(statuses, JSON.stringify(body)).toContain((body as { json: any }).json.status);
  }
}
