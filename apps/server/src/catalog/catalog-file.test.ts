import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogError, type CatalogFile, loadCatalogFile, parseCatalogFile } from "./catalog-file.js";

const VARIABLE = "REFVID_PROVIDERS_FILE";
const loadRouting = (file: string, environment: Record<string, string>): CatalogFile =>
  loadCatalogFile({ file, variable: VARIABLE, env: environment });

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-routing-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const env = { FAL_KEY: "fal-secret-1", REPLICATE_API_TOKEN: "r8_secret_2" };

const EXAMPLE = `
providers:
  fal-main:   { type: fal, url: https://queue.fal.run, token_env: FAL_KEY, max_concurrency: 10 }
  replicate:  { type: replicate, token_env: REPLICATE_API_TOKEN }
  gpu-box-1:  { type: cog, url: http://10.0.0.5:5000, max_concurrency: 1 }
  preview:    { type: preview }
routes:
  lab-a/model-a/reference-to-video:
    - { provider: fal-main, model: "fal-ai/some-model/reference-to-video" }
    - { provider: replicate, model: "owner/name", rename: { image_urls: images }, input: { fps: 24 } }   # fallback
  lab-b/model-b/reference-to-video:
    - { provider: gpu-box-1, only: [prompt, duration], as_number: [duration] }
  lab-d/model-d/reference-to-video:
    - { provider: gpu-box-1 }
`;

function errorOf(raw: unknown, environment: Record<string, string> = env): string {
  try {
    parseCatalogFile(raw, { file: "providers.yaml", variable: VARIABLE, env: environment });
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return (err as Error).message;
  }
  throw new Error("expected a CatalogError");
}

describe("the routing file", () => {
  it("reads the documented example (YAML), with default URLs and credentials from the environment", async () => {
    const file = join(dir, "providers.yaml");
    await writeFile(file, EXAMPLE);
    const routing = loadRouting(file, env);
    expect(routing.providers.map((p) => [p.name, p.type, p.url, p.token, p.maxConcurrency])).toEqual([
      ["fal-main", "fal", "https://queue.fal.run", "fal-secret-1", 10],
      ["replicate", "replicate", "https://api.replicate.com", "r8_secret_2", undefined],
      ["gpu-box-1", "cog", "http://10.0.0.5:5000", null, 1],
      ["preview", "preview", undefined, null, undefined],
    ]);
    const a = routing.routes["lab-a/model-a/reference-to-video"] ?? [];
    expect(a.map((r) => [r.provider.name, r.model])).toEqual([
      ["fal-main", "fal-ai/some-model/reference-to-video"],
      ["replicate", "owner/name"],
    ]);
    expect(a[1]).toMatchObject({ rename: { image_urls: "images" }, input: { fps: 24 } });
    expect(routing.routes["lab-d/model-d/reference-to-video"]?.[0]?.provider.name).toBe("gpu-box-1");
    expect(routing.routes["lab-b/model-b/reference-to-video"]?.[0]).toMatchObject({
      only: ["prompt", "duration"],
      asNumber: ["duration"],
    });
    expect(routing.routes["lab-c/model-c/reference-to-video"]).toBeUndefined();
  });

  it("reads JSON too", async () => {
    const file = join(dir, "providers.json");
    await writeFile(file, JSON.stringify({ providers: { p: { type: "preview" } }, routes: {} }));
    expect(loadRouting(file, env).providers).toEqual([{ name: "p", type: "preview", token: null }]);
  });

  it("names the path inside the file of every problem", () => {
    const message = errorOf({
      providers: {
        a: { type: "fal", token_env: "FAL_KEY", max_concurrency: 0 },
        b: { type: "replicat", token_env: "X" },
        c: { type: "cog" },
        d: { type: "preview", token_env: "FAL_KEY" },
      },
      routes: { "lab-a/model-a/reference-to-video": [] },
    });
    expect(message).toContain("providers.yaml is not valid");
    expect(message).toMatch(/providers\.a\.max_concurrency: /);
    expect(message).toMatch(
      /providers\.b\.type: type must be one of fal, replicate, cog, preview, simulated/,
    );
    expect(message).toMatch(/providers\.c\.url: /);
    expect(message).toMatch(/providers\.d: unknown field token_env/);
    expect(message).toMatch(/routes\.lab-a\/model-a\/reference-to-video: must list at least one route/);
  });

  it("refuses routes to unknown providers or models, a vendor route without a model, and an unset credential", () => {
    const message = errorOf(
      {
        providers: {
          fal: { type: "fal", token_env: "MISSING_KEY" },
          gpu: { type: "cog", url: "http://10.0.0.5:5000" },
        },
        routes: {
          "lab-a/model-a/reference-to-video": [{ provider: "fal" }, { provider: "nope" }],
          "lab-z/model-z/reference-to-video": [{ provider: "gpu" }],
        },
      },
      {},
    );
    expect(message).toContain("providers.fal.token_env: the environment variable MISSING_KEY is not set");
    expect(message).toContain(
      "routes.lab-a/model-a/reference-to-video[0].model: required for a fal provider",
    );
    expect(message).toContain(
      'routes.lab-a/model-a/reference-to-video[1].provider: no provider "nope" (providers: fal, gpu)',
    );
    expect(message).toMatch(/routes\.lab-z\/model-z\/reference-to-video: not a model \(models: lab-a/);
  });

  it("never shows a credential, and says what is wrong with a file it cannot read", async () => {
    const message = errorOf({ providers: { a: { type: "fal", token_env: "FAL_KEY", url: "ftp://x" } } });
    expect(message).toContain("providers.a.url: must be an http or https URL");
    expect(message).not.toContain("fal-secret-1");
    expect(() => loadRouting(join(dir, "missing.yaml"), env)).toThrow(/cannot read .*missing\.yaml/);
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "providers: [unclosed");
    expect(() => loadRouting(bad, env)).toThrow(/bad\.yaml is not valid YAML/);
  });
});
