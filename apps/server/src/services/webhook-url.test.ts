import { describe, expect, it } from "vitest";
import { checkWebhookUrl, isLocalHost } from "./webhook-url.js";

describe("checkWebhookUrl with local URLs refused", () => {
  it.each([
    "http://example.com/hook",
    "https://user:pw@example.com/hook",
    "ftp://example.com/hook",
    "https://localhost/hook",
    "https://localhost./hook",
    "https://foo.localhost./hook",
    "https://metadata.google.internal./x",
    "https://127.0.0.1/hook",
    "https://2130706433/hook",
    "https://0x7f000001/hook",
    "https://017700000001/hook",
    "https://0.0.0.0/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://10.1.2.3/",
    "https://172.16.0.1/",
    "https://192.168.1.1/",
    "https://100.64.0.1/",
    "https://198.18.0.1/",
    "https://224.0.0.1/",
    "https://255.255.255.255/",
    "https://[::1]/",
    "https://[::]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::127.0.0.1]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[fd00::1]/",
    "https://[fe80::1]/",
    "https://[febf::1]/",
    "https://[fec0::1]/",
    "https://[ff02::1]/",
  ])("refuses %s", (url) => {
    const problems = checkWebhookUrl(url, false);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.field).toBe("body.webhook_url");
  });

  it.each(["https://example.com/hook", "https://93.184.216.34/hook", "https://[2606:2800:220:1::]/hook"])(
    "accepts %s",
    (url) => {
      expect(checkWebhookUrl(url, false)).toEqual([]);
    },
  );

  it("accepts http and local hosts when the operator allows local URLs", () => {
    expect(checkWebhookUrl("http://127.0.0.1:9000/hook", true)).toEqual([]);
    expect(checkWebhookUrl("ftp://127.0.0.1/", true)).toHaveLength(1);
  });

  it("knows public names are not local", () => expect(isLocalHost("example.com")).toBe(false));
});
