import type { AddressInfo } from "node:net";
import { loadOpenapiDocument } from "@refvid/api-types/document";
import express from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { describe, expect, it } from "vitest";
import { cacheValidatorRouteLookup, validatorPathToRegexp } from "./validator-route-cache.js";

describe("the cache in front of the validator's route lookup", () => {
  it("compiles each route template once per options, and matches as path-to-regexp does", () => {
    const original = validatorPathToRegexp().pathToRegexp;
    cacheValidatorRouteLookup();
    cacheValidatorRouteLookup(); // idempotent: wraps once
    const { pathToRegexp } = validatorPathToRegexp();
    expect(pathToRegexp).not.toBe(original);
    const options = { sensitive: false, strict: false };
    const first = pathToRegexp("/v1/runs/:run_id", options);
    expect(pathToRegexp("/v1/runs/:run_id", { ...options })).toBe(first);
    expect(pathToRegexp("/v1/runs/:run_id", { sensitive: true, strict: false })).not.toBe(first);
    expect(Object.isFrozen(first)).toBe(true);

    const fresh = original("/v1/runs/:run_id", options);
    expect(first.keys).toEqual(fresh.keys);
    for (const path of ["/v1/runs/run_1", "/V1/RUNS/run_1", "/v1/runs/run_1/", "/v1/runs", "/v1/runs/a/b"]) {
      expect(first.regexp.exec(path)?.slice(1) ?? null).toEqual(fresh.regexp.exec(path)?.slice(1) ?? null);
    }
    // Calls the validator never makes go to path-to-regexp untouched.
    expect(pathToRegexp("/a/:b", { end: false })).not.toBe(pathToRegexp("/a/:b", { end: false }));
  });

  it("is what express-openapi-validator calls on every request (it does not keep a reference of its own)", async () => {
    cacheValidatorRouteLookup();
    const module = validatorPathToRegexp();
    const cached = module.pathToRegexp;
    let calls = 0;
    module.pathToRegexp = (...args: Parameters<typeof cached>) => {
      calls++;
      return cached(...args);
    };
    const app = express();
    app.use(
      OpenApiValidator.middleware({ apiSpec: loadOpenapiDocument() as never, validateSecurity: false }),
    );
    app.get("/v1/runs/:run_id", (_req, res) => {
      res.json({});
    });
    const server = app.listen(0, "127.0.0.1");
    try {
      await new Promise((resolve) => server.once("listening", resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/runs/run_1`;
      expect((await fetch(url)).status).toBe(200);
      const afterFirst = calls;
      expect((await fetch(url)).status).toBe(200);
      expect(calls).toBeGreaterThan(afterFirst);
    } finally {
      module.pathToRegexp = cached;
      server.close();
    }
  });
});
