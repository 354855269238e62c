/** The console's routes: each page, and each run, has a hash of its own. */
import { describe, expect, it } from "vitest";
import { type Route, routeOf, runHash } from "../src/route.js";

describe("routeOf", () => {
  it.each<[string, string, Route]>([
    ["no hash", "", { page: "playground" }],
    ["the playground", "#/playground", { page: "playground" }],
    ["the runs list", "#/runs", { page: "runs", runId: undefined }],
    ["the runs list, trailing slash", "#/runs/", { page: "runs", runId: undefined }],
    ["one run", "#/runs/run_0f8c3a52-5d0e", { page: "runs", runId: "run_0f8c3a52-5d0e" }],
    ["one run, escaped", "#/runs/run%2Fx", { page: "runs", runId: "run/x" }],
    ["one run, a broken escape kept", "#/runs/run%E0", { page: "runs", runId: "run%E0" }],
    ["a query after the page", "#/account?x=1", { page: "account" }],
    ["the account", "#/account", { page: "account" }],
    ["too deep a path", "#/runs/run_1/more", { page: "playground" }],
    ["an unknown page", "#/nowhere", { page: "playground" }],
  ])("reads %s", (_name, hash, want) => {
    expect(routeOf(hash)).toEqual(want);
  });

  it("reads back the hash of a run's page", () => {
    const id = "run_0f8c3a52-5d0e-4b8e-9d3c-2a7f1e6b9c41";
    expect(runHash(id)).toBe(`#/runs/${id}`);
    expect(routeOf(runHash(id))).toEqual({ page: "runs", runId: id });
  });
});
