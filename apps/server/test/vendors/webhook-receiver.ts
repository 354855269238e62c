/**
 * A local webhook endpoint for the protocol servers' tests: records each delivery with its raw
 * body and headers, and answers with the statuses queued in `answers` (then 200).
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedHook {
  /** Path and query the delivery was posted to. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as sent, byte for byte (signatures cover it). */
  body: string;
  receivedAt: number;
  answered: number;
}

export interface WebhookReceiver {
  /** The base URL; deliver to any path below it. */
  url: string;
  hooks: ReceivedHook[];
  /** Statuses to answer the next deliveries with, in order; 200 once empty. */
  answers: number[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const hooks: ReceivedHook[] = [];
  const answers: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const answered = answers.shift() ?? 200;
      const body = Buffer.concat(chunks).toString("utf8");
      hooks.push({ url: req.url ?? "/", headers: req.headers, body, receivedAt: Date.now(), answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hooks,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
