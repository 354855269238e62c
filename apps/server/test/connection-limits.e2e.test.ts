/**
 * One client cannot hold every connection (docs/decisions.md, "Requests at the edge"): an address
 * past REFVID_MAX_CONNECTIONS_PER_ADDRESS has its extra connections closed at once while another
 * address is served. Clients come from loopback addresses of their own (127.0.0.2, .3), so the
 * harness's own calls from 127.0.0.1 stay out of the counts.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, useTestRefvid } from "./harness.js";

const PER_ADDRESS = 5;

const t = useTestRefvid({
  REFVID_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
});

const opened: Socket[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.destroy();
});

/**
 * A connection from `localAddress` that asks for /healthz and stays open after its answer:
 * resolves with what the server sent, once a whole answer is in or the server has closed it.
 */
async function healthzFrom(localAddress: string): Promise<{ socket: Socket; answer: string }> {
  const socket = connect({ port: Number(new URL(t.url).port), host: "127.0.0.1", localAddress });
  socket.on("error", () => {});
  opened.push(socket);
  const answer = await new Promise<string>((resolve) => {
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c;
      if (text.includes('{"status":"ok"}')) resolve(text);
    });
    socket.once("close", () => resolve(text));
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  });
  return { socket, answer };
}

describe("REFVID_MAX_CONNECTIONS_PER_ADDRESS", () => {
  it("closes an address's connections past its limit at once, while another address is served", async () => {
    const held: Socket[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) {
      const { socket, answer } = await healthzFrom("127.0.0.3");
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      held.push(socket);
    }
    // One more from the same address: closed before a byte of an answer.
    const extra = await healthzFrom("127.0.0.3");
    expect(extra.answer).toBe("");
    expect(extra.socket.destroyed).toBe(true);
    // Another client is served as usual.
    expect((await healthzFrom("127.0.0.2")).answer).toMatch(/^HTTP\/1\.1 200/);

    // Once the server has seen one of the address's connections go, it takes another.
    held[0]?.destroy();
    const again = await eventually(
      async () => {
        const { answer } = await healthzFrom("127.0.0.3");
        return answer.startsWith("HTTP/1.1 200") ? answer : undefined;
      },
      10_000,
      "a connection from 127.0.0.3 served again",
    );
    expect(again).toMatch(/^HTTP\/1\.1 200/);
  });
});
