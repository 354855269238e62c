import { describe, expect, it } from "vitest";
import { checkWebhookUrl } from "../services/webhook-url.js";
import { addressRefusal, blockedReason } from "./address-policy.js";

// Every range of the IANA IPv4 and IPv6 special-purpose registries that is not globally reachable,
// the forms that embed an IPv4 address in an IPv6 one, and cloud metadata services:
// [address, reason, opened by REFVID_ALLOW_LOCAL_URLS].
const special: [string, RegExp, boolean][] = [
  ["0.0.0.0", /unspecified/, false],
  ["0.1.2.3", /unspecified/, false],
  ["10.1.2.3", /private/, true],
  ["100.64.0.1", /shared address space/, true],
  ["100.127.255.254", /shared address space/, true],
  ["100.100.100.200", /cloud metadata/, false],
  ["127.0.0.1", /loopback/, true],
  ["127.255.255.254", /loopback/, true],
  ["169.254.169.254", /link-local \(cloud metadata\)/, false],
  ["172.16.0.1", /private/, true],
  ["172.31.255.255", /private/, true],
  ["192.0.0.9", /IETF protocol assignments/, true],
  ["192.0.2.1", /documentation/, false],
  ["192.88.99.1", /6to4 relay/, false],
  ["192.168.1.1", /private/, true],
  ["198.18.0.1", /benchmarking/, true],
  ["198.19.255.255", /benchmarking/, true],
  ["198.51.100.7", /documentation/, false],
  ["203.0.113.9", /documentation/, false],
  ["224.0.0.1", /multicast/, false],
  ["239.255.255.250", /multicast/, false],
  ["240.0.0.1", /reserved/, false],
  ["255.255.255.255", /broadcast/, false],
  ["::", /unspecified/, false],
  ["::1", /loopback/, true],
  ["::ffff:0:0", /IPv4-mapped/, false],
  ["::ffff:7f00:1", /IPv4-mapped/, false],
  ["::ffff:808:808", /IPv4-mapped/, false],
  ["::ffff:0:7f00:1", /IPv4-translated/, false],
  ["::7f00:1", /IPv4-compatible/, false],
  ["::1:0:0:1", /not a global unicast/, false],
  ["64:ff9b::a9fe:a9fe", /NAT64/, false],
  ["64:ff9b:1::a00:1", /local-use NAT64/, false],
  ["100::1", /discard-only/, false],
  ["100:0:0:1::1", /dummy/, false],
  ["2001::1", /Teredo/, false],
  ["2001:1::1", /IETF protocol assignments/, false],
  ["2001:2::1", /benchmarking/, true],
  ["2001:20::1", /IETF protocol assignments/, false],
  ["2001:db8::1", /documentation/, false],
  ["2002:7f00:1::1", /6to4/, false],
  ["3fff::1", /documentation/, false],
  ["3fff:fff:ffff::1", /documentation/, false],
  ["5f00::1", /segment routing/, false],
  ["fc00::1", /unique-local/, true],
  ["fd12::1", /unique-local/, true],
  ["fd00:ec2::254", /cloud metadata/, false],
  ["fe80::1", /link-local/, false],
  ["febf::1", /link-local/, false],
  ["fec0::1", /site-local/, true],
  ["ff02::1", /multicast/, false],
  ["4000::1", /not a global unicast/, false],
  ["e000::1", /not a global unicast/, false],
];

// Public addresses, including the neighbours of the ranges above and globally reachable
// special-purpose ranges (AS112, AMT).
const reachable = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "100.63.255.255",
  "100.128.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "192.0.1.255",
  "192.0.3.0",
  "192.31.196.1",
  "192.52.193.1",
  "192.175.48.1",
  "198.17.255.255",
  "198.20.0.0",
  "198.51.99.255",
  "203.0.114.0",
  "223.255.255.255",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2001:200::1",
  "2620:4f:8000::1",
  "2a00:1450:4001::1",
  "3ffe::1",
  "3fff:1000::1",
];

describe("the outbound address policy", () => {
  it.each(special)("refuses %s (%s)", (address, reason) => {
    expect(blockedReason(address)).toMatch(reason);
  });

  it.each(special)("with local URLs allowed, %s (%s) is opened: %s", (address, reason, opened) => {
    expect(addressRefusal(address, false)).toMatch(reason);
    for (const address of reachable) expect(addressRefusal(address, true)).toBeNull();
    if (opened) expect(addressRefusal(address, true)).toBeNull();
    else expect(addressRefusal(address, true)).toMatch(reason);
  });

  it.each(reachable)("lets %s through", (address) => {
    expect(blockedReason(address)).toBeNull();
  });

  it("refuses webhook URLs on those addresses at submit time, naming the field", () => {
    for (const [address] of special) {
      const host = address.includes(":") ? `[${address}]` : address;
      expect(checkWebhookUrl(`https://${host}/hook`, false), address).toMatchObject([
        { field: "body.webhook_url" },
      ]);
    }
    for (const address of reachable) {
      const host = address.includes(":") ? `[${address}]` : address;
      expect(checkWebhookUrl(`https://${host}/hook`, false), address).toEqual([]);
    }
  });
});
