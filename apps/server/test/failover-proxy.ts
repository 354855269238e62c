/**
 * A TCP proxy in front of several refvid processes, standing in for a load balancer: each
 * connection goes to the first upstream that accepts it, so a process that has stopped listening
 * is passed over (a refused connect is safe to try elsewhere: no byte of the request was sent).
 */

import type { AddressInfo } from "node:net";
import { createServer, type Socket, connect as tcpConnect } from "node:net";

export interface FailoverProxy {
  url: string;
  /** The upstream port each connection went to, in order. */
  connections: number[];
  close(): Promise<void>;
}

export async function failoverProxy(upstreamPorts: readonly number[]): Promise<FailoverProxy> {
  const connections: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.pause();
    const attempt = (i: number) => {
      const port = upstreamPorts[i];
      if (port === undefined) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect(port, "127.0.0.1");
      upstream.once("error", () => attempt(i + 1));
      upstream.once("connect", () => {
        upstream.removeAllListeners("error");
        connections.push(port);
        sockets.add(upstream);
        upstream.once("close", () => sockets.delete(upstream));
        // An end on either side is passed on as an end (a clean close), a reset as a reset.
        client.pipe(upstream);
        upstream.pipe(client);
        client.on("error", () => upstream.destroy());
        upstream.on("error", () => client.destroy());
        client.resume();
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
