import { createServer } from "node:net";
import { expect, it } from "vitest";
import { freePort } from "../src/ports.js";

it("gives a port a server can listen on", async () => {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  await new Promise((resolve) => server.close(resolve));
  expect(port).toBeGreaterThan(0);
});
