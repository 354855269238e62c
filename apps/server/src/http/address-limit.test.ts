import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { compileTrustProxy } from "../net/trust-proxy.js";
import { addressGroup, limitConnectionsPerAddress } from "./address-limit.js";

describe("addressGroup", () => {
  it.each([
    ["203.0.113.9", "203.0.113.9"],
    ["::ffff:203.0.113.9", "203.0.113.9"],
    ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["::1", "0:0:0:0::/64"],
  ])("counts %s as %s", (address, want) => {
    expect(addressGroup(address)).toBe(want);
  });
});

describe("limitConnectionsPerAddress", () => {
  let server: Server | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    server?.closeAllConnections();
    if (server) await new Promise((done) => server?.close(done));
  });

  async function listening(trustProxy: string | undefined) {
    server = createServer((_req, res) => res.end("ok"));
    const open = limitConnectionsPerAddress(server, {
      maxConnectionsPerAddress: 2,
      trustProxy: compileTrustProxy(trustProxy),
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const port = (server.address() as AddressInfo).port;
    /** A connection from `from`, and whether the server closed it before `settleMs` (an answer to a request). */
    const from = async (localAddress: string) => {
      const socket = connect({ port, host: "127.0.0.1", localAddress });
      socket.on("error", () => {});
      sockets.push(socket);
      await once(socket, "connect");
      const answer = new Promise<string>((resolve) => {
        let text = "";
        socket.on("data", (c) => {
          text += c;
          if (text.includes("ok")) resolve(text);
        });
        socket.once("close", () => resolve(text));
      });
      socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      return answer;
    };
    return { open, from };
  }

  it("closes a connection that takes its address past the limit, and serves other addresses", async () => {
    const { open, from } = await listening(undefined);
    expect(await from("127.0.0.2")).toMatch(/^HTTP\/1\.1 200/);
    expect(await from("127.0.0.2")).toMatch(/^HTTP\/1\.1 200/);
    expect(await from("127.0.0.2")).toBe("");
    expect(await from("127.0.0.3")).toMatch(/^HTTP\/1\.1 200/);
    expect(Object.fromEntries(open)).toEqual({ "127.0.0.2": 2, "127.0.0.3": 1 });
  });

  it("does not count a trusted proxy's connections", async () => {
    const { open, from } = await listening("127.0.0.2");
    for (let i = 0; i < 4; i++) expect(await from("127.0.0.2")).toMatch(/^HTTP\/1\.1 200/);
    expect(open.size).toBe(0);
  });
});
