import { describe, expect, it } from "vitest";
import { compileTrustProxy } from "./trust-proxy.js";

describe("compileTrustProxy", () => {
  it.each([
    ["unset", undefined, [["127.0.0.1", 0, false]]],
    ["false", "false", [["127.0.0.1", 0, false]]],
    ["true", "true", [["203.0.113.9", 0, true]]],
    [
      "a hop count",
      "1",
      [
        ["203.0.113.9", 0, true],
        ["203.0.113.9", 1, false],
      ],
    ],
    [
      "a name",
      "loopback",
      [
        ["127.0.0.1", 0, true],
        ["::1", 0, true],
        ["::ffff:127.0.0.1", 0, true],
        ["10.0.0.1", 0, false],
      ],
    ],
    [
      "addresses and subnets",
      "10.0.0.0/8, 192.168.1.1",
      [
        ["10.2.3.4", 0, true],
        ["192.168.1.1", 0, true],
        ["192.168.1.2", 0, false],
      ],
    ],
  ] as const)("reads %s as Express reads trust proxy", (_name, given, want) => {
    const trust = compileTrustProxy(given);
    for (const [address, hop, trusted] of want)
      expect(trust(address, hop), `${address} at hop ${hop}`).toBe(trusted);
  });

  it.each([["proxy.example.com"], ["10.0.0.0/99"]])("refuses %j, naming it", (given) => {
    expect(() => compileTrustProxy(given)).toThrow(TypeError);
  });
});
