/**
 * `@refvid/test-browser/ports`: a loopback port for a test server (a refvid process, a fake
 * vendor). Its own entry point, so a test that starts no browser loads no Playwright.
 */
import { createServer } from "node:net";

/** A port nothing listens on now on 127.0.0.1 (the system picks it; it is free until someone takes it). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}
