import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { describe, expect, it } from "vitest";
import { createExpressServer } from "./express-server.js";

describe("createExpressServer", () => {
  it("serves Express with requests and responses whose prototype Express never has to change", async () => {
    const app = express();
    app.use(express.json());
    app.post("/things/:id", (req, res) => {
      res.status(201).json({
        id: req.params.id,
        body: req.body,
        header: req.get("x-test"),
        path: req.path,
        query: req.query,
        sameApp: req.app === app && res.app === app,
      });
    });
    const server = createExpressServer(app);
    // The prototypes Node gave each request and response, before Express saw them.
    const born: [object | null, object | null][] = [];
    server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
      born.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
    });
    const seen: [object | null, object | null][] = [];
    app.use((req, res, next) => {
      seen.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
      next();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await fetch(`${url}/things/7?a=1`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-test": "yes" },
        body: JSON.stringify({ n: 1 }),
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({
        id: "7",
        body: { n: 1 },
        header: "yes",
        path: "/things/7",
        query: { a: "1" },
        sameApp: true,
      });
      // A path no route takes goes through the middleware above, then Express's own 404.
      expect((await fetch(`${url}/nothing`)).status).toBe(404);
      expect(seen).toHaveLength(1);
      expect(born).toHaveLength(2);
      for (const [req, res] of born) {
        expect(req).toBe(app.request);
        expect(res).toBe(app.response);
      }
      // After Express's setup, the same prototypes: Express found them in place.
      expect(seen[0]?.[0]).toBe(app.request);
      expect(seen[0]?.[1]).toBe(app.response);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
