import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("admin tokens", () => {
  it("names admin tokens: REFVID_ADMIN_TOKEN is admin's, REFVID_ADMIN_TOKENS gives the others", () => {
    const single = "s".repeat(16);
    const alice = "a".repeat(20);
    const bob = "b".repeat(16);
    expect(loadConfig({}).adminTokens).toEqual([]);
    expect(
      loadConfig({ REFVID_ADMIN_TOKEN: single, REFVID_ADMIN_TOKENS: ` alice:${alice}, bob:${bob},` })
        .adminTokens,
    ).toEqual([
      { name: "admin", token: single },
      { name: "alice", token: alice },
      { name: "bob", token: bob },
    ]);
    expect(() => loadConfig({ REFVID_ADMIN_TOKENS: "alice" })).toThrow(/item 1: must be name:token/);
    expect(() => loadConfig({ REFVID_ADMIN_TOKENS: "alice:short" })).toThrow(
      /item 1 \(alice\).*16 characters/,
    );
    expect(() => loadConfig({ REFVID_ADMIN_TOKEN: single, REFVID_ADMIN_TOKENS: `admin:${alice}` })).toThrow(
      /the name admin is used twice/,
    );
    expect(() => loadConfig({ REFVID_ADMIN_TOKENS: `alice:${alice},bob:${alice}` })).toThrow(
      /item 2 \(bob\): the token is another name's too/,
    );
  });
});
