import { describe, expect, it } from "vitest";
import { type BannerFacts, samplesPortOf, servingOrigin, startupBanner } from "./banner.js";

const facts = (
  over: Partial<BannerFacts> = {},
  config: Partial<BannerFacts["config"]> = {},
): BannerFacts => ({
  config: {
    role: "all",
    publicUrl: "http://localhost:8080",
    adminTokens: [],
    store: { kind: "memory" },
    ...config,
  },
  port: 8080,
  probePort: null,
  demoApiKey: "sk-test-demo",
  samplesPort: undefined,
  ...over,
});

/** The sample reference URL the banner's curl uses, and how it says to serve the samples. */
const samplesOf = (lines: string[]) => ({
  url: /"(http:\/\/[^"]+\/sculpture\.png)"/.exec(lines.join("\n"))?.[1],
  serve: /serve them first: ([^)]+)\)/.exec(lines.join("\n"))?.[1],
});

describe("startupBanner", () => {
  it.each<[string, { given: BannerFacts; want: { url: string; serve: string } }]>([
    [
      "SAMPLES_PORT unset: the sample server's default port",
      {
        given: facts(),
        want: { url: "http://localhost:9001/sculpture.png", serve: "npm run serve:samples" },
      },
    ],
    [
      "SAMPLES_PORT set: that port, and the command that serves on it",
      {
        given: facts({ samplesPort: "9101" }),
        want: {
          url: "http://localhost:9101/sculpture.png",
          serve: "SAMPLES_PORT=9101 npm run serve:samples",
        },
      },
    ],
    [
      "SAMPLES_PORT not a port: the default, as the sample server would not start on it",
      {
        given: facts({ samplesPort: "nine" }),
        want: { url: "http://localhost:9001/sculpture.png", serve: "npm run serve:samples" },
      },
    ],
  ])("points the demo's curl at the sample server: %s", (_name, { given, want }) => {
    expect(samplesOf(startupBanner(given))).toEqual(want);
  });

  it.each<[string, { given: BannerFacts; want: string }]>([
    ["the default public URL", { given: facts(), want: "http://localhost:8080" }],
    [
      "REFVID_PUBLIC_URL as set",
      {
        given: facts({}, { publicUrl: "https://refvid.example.com" }),
        want: "https://refvid.example.com",
      },
    ],
    [
      "PORT=0: the port the system gave",
      { given: facts({ port: 43117 }, { publicUrl: "http://localhost:0" }), want: "http://localhost:43117" },
    ],
    [
      "PORT=9090",
      { given: facts({ port: 9090 }, { publicUrl: "http://localhost:9090" }), want: "http://localhost:9090" },
    ],
  ])("serves, documents and submits at the origin it is reached at: %s", (_name, { given, want }) => {
    const text = startupBanner(given).join("\n");
    expect(text).toContain(`refvid is serving on ${want} (role: all)`);
    expect(text).toContain(`API reference: ${want}/docs`);
    expect(text).toContain(`web console: ${want}/console`);
    expect(text).toContain(`curl -s -X POST ${want}/v1/run/lab-d/model-d/reference-to-video`);
    expect(text).not.toMatch(/localhost:0\b/);
  });

  it("without the demo, has no curl; a worker names its port and the probe port", () => {
    expect(startupBanner(facts({ demoApiKey: null })).join("\n")).not.toContain("curl");
    expect(startupBanner(facts({ port: 8081, probePort: 9464 }, { role: "worker" }))).toEqual([
      "refvid worker started (health probes on port 8081)",
      "  store: memory (nothing is kept after exit)",
      "  health probes and /metrics also on port 9464 (REFVID_PROBE_PORT)",
    ]);
  });
});

describe("servingOrigin and samplesPortOf", () => {
  it.each<[string, number, string]>([
    ["http://localhost:8080", 8080, "http://localhost:8080"],
    ["http://localhost:0", 40000, "http://localhost:40000"],
    ["https://api.example.com/refvid", 8080, "https://api.example.com/refvid"],
  ])("servingOrigin(%s, %i) is %s", (url, port, want) => {
    expect(servingOrigin(url, port)).toBe(want);
  });

  it.each<[string | undefined, number]>([
    [undefined, 9001],
    ["9001", 9001],
    ["9101", 9101],
    [" 9102 ", 9102],
    ["", 9001],
    ["0", 9001],
    ["70000", 9001],
    ["90a", 9001],
  ])("samplesPortOf(%j) is %i", (value, want) => {
    expect(samplesPortOf(value)).toBe(want);
  });
});
