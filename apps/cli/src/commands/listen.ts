/**
 * `refvid webhooks listen --forward-to URL`: a local receiver for refvid's webhooks, in the spirit
 * of `stripe listen`. It creates nothing upstream: give the URL it prints as a run's webhook_url.
 * Each delivery is shown, its signature checked with the `standardwebhooks` package and the secret
 * of the key's environment (a test key's listener verifies test runs' deliveries), and, when genuine, forwarded to your app with its raw body and headers;
 * your app's answer goes back to refvid, so a failing app gets the usual retries.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Command, InvalidArgumentError } from "commander";
import type { Webhook } from "standardwebhooks";
import { colorStatus } from "../format.js";
import type { Output } from "../io.js";
import { session } from "../session.js";

const MAX_BODY_BYTES = 5 * 1024 * 1024;
const FORWARD_TIMEOUT_MS = 30_000;
/** Headers that describe one hop, not the delivery; fetch sets its own. */
const HOP_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "expect",
]);

interface ListenOptions {
  forwardTo: string;
  port: number;
  host: string;
}

interface Delivery {
  received_at: string;
  webhook_id: string | null;
  type: string | null;
  run_id: string | null;
  status: string | null;
  signature: "valid" | "invalid";
  signature_error?: string;
  forward: { status: number; duration_ms: number } | { error: string } | null;
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError("Use a port number, 0 to 65535.");
  return n;
}

function url(value: string): string {
  if (!/^https?:\/\/[^/]/.test(value)) throw new InvalidArgumentError("Use an http:// or https:// URL.");
  return value;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error(`body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function headerRecord(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/** Checks the signature with each secret in force; the event, or why none verified it. */
/** The parts of a refvid event shown for each delivery. */
interface EventShape {
  type?: unknown;
  data?: { run_id?: unknown; status?: unknown };
}

function verify(verifiers: Webhook[], body: Buffer, headers: Record<string, string>) {
  let reason = "no secret";
  for (const verifier of verifiers) {
    try {
      return { event: verifier.verify(body, headers) as EventShape, reason: undefined };
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error);
    }
  }
  let event: EventShape | undefined;
  try {
    event = JSON.parse(body.toString("utf8"));
  } catch {}
  return { event, reason };
}

function show(io: Output, d: Delivery): void {
  if (io.json) {
    io.print(JSON.stringify(d));
    return;
  }
  const { c } = io;
  const time = d.received_at.slice(11, 19);
  const signature =
    d.signature === "valid" ? c.green("signature ok") : c.red(`signature INVALID (${d.signature_error})`);
  let forward = c.dim("not forwarded");
  if (d.forward && "status" in d.forward) {
    const status =
      d.forward.status < 300 ? c.green(String(d.forward.status)) : c.red(String(d.forward.status));
    forward = `→ ${status} (${d.forward.duration_ms} ms)`;
  } else if (d.forward) forward = `→ ${c.red(`forward failed: ${d.forward.error}`)}`;
  const status = d.status ? colorStatus(c, d.status) : "-";
  io.print(
    `${time}  ${d.type ?? "?"}  ${d.run_id ?? "?"}  ${status}  ${signature}  ${forward}  ${c.dim(d.webhook_id ?? "")}`,
  );
}

async function forward(target: string, req: IncomingMessage, body: Buffer) {
  const headers = Object.entries(headerRecord(req)).filter(([name]) => !HOP_HEADERS.has(name));
  const started = performance.now();
  const response = await fetch(target, {
    method: req.method ?? "POST",
    headers,
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
  });
  const answer = Buffer.from(await response.arrayBuffer());
  return { response, answer, durationMs: Math.round(performance.now() - started) };
}

export function registerListen(webhooks: Command): void {
  webhooks
    .command("listen")
    .description(
      "Receive webhooks on this machine, like `stripe listen`: prints a URL to give refvid as a run's " +
        "webhook_url, shows each delivery (event, run, status), verifies its signature with the " +
        "webhook secret of the key's environment (runs of the other environment do not verify), and forwards the raw body and headers to your app, printing its answer, " +
        "which goes back to refvid. A delivery with a bad signature is answered 400 and not forwarded.\n\n" +
        "It creates nothing upstream. With --json, one JSON object per line. Ctrl-C stops it.",
    )
    .requiredOption("--forward-to <url>", "your app's webhook endpoint, e.g. http://localhost:3000/hook", url)
    .option("--port <n>", "port to listen on (default: any free port)", port, 0)
    .option(
      "--host <address>",
      "address to listen on; 0.0.0.0 to take deliveries from another machine",
      "127.0.0.1",
    )
    .addHelpText(
      "after",
      "\nExample:\n  refvid webhooks listen --forward-to http://localhost:3000/hook --port 4242\n" +
        "  refvid run model-d --prompt … --image … --yes --webhook-url http://127.0.0.1:4242/",
    )
    .action(async (options: ListenOptions, command: Command) => {
      const { io, client } = await session(command);
      const secret = await client().getWebhookSecret();
      const { Webhook } = await import("standardwebhooks");
      const verifiers = [secret.secret, secret.previous_secret]
        .filter((s): s is string => typeof s === "string")
        .map((s) => new Webhook(s));

      const handle = async (req: IncomingMessage, res: ServerResponse) => {
        const body = await readBody(req);
        const headers = headerRecord(req);
        const { event, reason } = verify(verifiers, body, headers);
        const delivery: Delivery = {
          received_at: new Date().toISOString(),
          webhook_id: headers["webhook-id"] ?? null,
          type: typeof event?.type === "string" ? event.type : null,
          run_id: typeof event?.data?.run_id === "string" ? event.data.run_id : null,
          status: typeof event?.data?.status === "string" ? event.data.status : null,
          signature: reason === undefined ? "valid" : "invalid",
          ...(reason === undefined ? {} : { signature_error: reason }),
          forward: null,
        };
        if (reason !== undefined) {
          show(io, delivery);
          res.writeHead(400, { "content-type": "application/json" }).end('{"error":"invalid signature"}');
          return;
        }
        try {
          const { response, answer, durationMs } = await forward(options.forwardTo, req, body);
          delivery.forward = { status: response.status, duration_ms: durationMs };
          const type = response.headers.get("content-type");
          res.writeHead(response.status, type ? { "content-type": type } : {}).end(answer);
        } catch (error) {
          const cause = (error as { cause?: { code?: string } }).cause?.code;
          delivery.forward = { error: cause ?? (error instanceof Error ? error.message : String(error)) };
          res.writeHead(502, { "content-type": "application/json" }).end('{"error":"forward failed"}');
        }
        show(io, delivery);
      };

      const server = createServer((req, res) => {
        handle(req, res).catch((error: unknown) => {
          io.info(`${io.ce.red("error:")} ${error instanceof Error ? error.message : String(error)}`);
          if (!res.headersSent) res.writeHead(400).end();
        });
      });
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject).listen(options.port, options.host, () => resolve());
      });
      const { port: bound } = server.address() as AddressInfo;
      const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
      const webhookUrl = `http://${host.includes(":") ? `[${host}]` : host}:${bound}/`;
      if (io.json)
        io.print(
          JSON.stringify({
            ready: true,
            webhook_url: webhookUrl,
            forward_to: options.forwardTo,
            environment: secret.environment,
          }),
        );
      else {
        io.print(`Ready. Webhook URL: ${io.c.bold(webhookUrl)}`);
        io.print(`Give it as a run's webhook_url: refvid run <model> … --webhook-url ${webhookUrl}`);
        io.print(
          `Verifying with the ${secret.environment} secret: runs made with ${secret.environment} keys verify, others are refused.`,
        );
        io.print(`Forwarding verified deliveries to ${options.forwardTo}. Ctrl-C to stop.`);
      }
      await new Promise<void>((resolve) => {
        const stop = () => {
          server.close(() => resolve());
          server.closeAllConnections();
        };
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}
