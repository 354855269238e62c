/** `refvid login` and its profiles, `refvid account`, `refvid models`. */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type Account, cli, newAccount, pty, tempDir } from "./cli.js";

let account: Account;
beforeAll(async () => {
  account = await newAccount();
});

describe("refvid login", () => {
  it("checks the key, saves the profile with mode 600, and later commands use it", async () => {
    const config = tempDir();
    const env = { XDG_CONFIG_HOME: config };
    const login = await cli(["login", "--base-url", `${inject("baseUrl")}/`, "--api-key", account.key], {
      env,
    });
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${inject("baseUrl")} as CLI test (test key sk-test-`);
    const path = join(config, "refvid", "config.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, "refvid")).mode & 0o077).toBe(0);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      profiles: { default: { base_url: inject("baseUrl"), api_key: account.key } },
    });

    const accountJson = await cli(["account", "--json"], { env });
    expect(accountJson.code).toBe(0);
    expect(JSON.parse(accountJson.stdout).organization_id).toBe(account.organizationId);

    // The variables win over the profile.
    const overridden = await cli(["account"], { env: { ...env, REFVID_API_KEY: "sk-test-not-a-key" } });
    expect(overridden.code).toBe(3);
    expect(overridden.stderr).toContain("HTTP 401");
  });

  it("keeps named profiles side by side, picked with --profile", async () => {
    const other = await newAccount();
    const config = tempDir();
    const env = { XDG_CONFIG_HOME: config };
    const base = ["--base-url", inject("baseUrl")];
    expect((await cli(["login", ...base, "--api-key", account.key], { env })).code).toBe(0);
    const named = await cli(
      ["login", "--profile", "other", ...base, "--api-key", other.key, "--admin-token", "t0ken"],
      {
        env,
      },
    );
    expect(named.code).toBe(0);
    expect(named.stdout).toContain('Saved profile "other"');
    const file = JSON.parse(readFileSync(join(config, "refvid", "config.json"), "utf8"));
    expect(Object.keys(file.profiles)).toEqual(["default", "other"]);
    expect(file.profiles.other.admin_token).toBe("t0ken");

    const viaOther = await cli(["--profile", "other", "account", "--json"], { env });
    expect(JSON.parse(viaOther.stdout).organization_id).toBe(other.organizationId);
    const viaDefault = await cli(["account", "--json"], { env });
    expect(JSON.parse(viaDefault.stdout).organization_id).toBe(account.organizationId);

    const missing = await cli(["account", "--profile", "nope"], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no profile "nope"');
  });

  it("saves nothing when the server refuses the key (exit 3)", async () => {
    const config = tempDir();
    const result = await cli(["login", "--base-url", inject("baseUrl"), "--api-key", "sk-test-wrong"], {
      env: { XDG_CONFIG_HOME: config },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("HTTP 401");
    expect(() => statSync(join(config, "refvid", "config.json"))).toThrow();
  });

  it("asks for what is missing on a terminal, and refuses to ask off one (exit 2)", async () => {
    const config = tempDir();
    const piped = await cli(["login", "--base-url", inject("baseUrl")], { env: { XDG_CONFIG_HOME: config } });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain("pass --api-key");

    const session = pty(["login"], { env: { XDG_CONFIG_HOME: config } });
    await session.waitFor("refvid server URL");
    session.type(`${inject("baseUrl")}\r`);
    await session.waitFor("API key");
    session.type(`${account.key}\r`);
    const { code, output } = await session.done;
    expect(code).toBe(0);
    expect(output).not.toContain(account.key); // masked
    expect(output).toContain("Logged in to");
    expect(
      JSON.parse(readFileSync(join(config, "refvid", "config.json"), "utf8")).profiles.default.api_key,
    ).toBe(account.key);
  });
});

describe("refvid account", () => {
  it("shows the wallet and limits", async () => {
    const result = await cli(["account"], { env: account.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/organization\s+CLI test \(org_/);
    expect(result.stdout).toMatch(/balance\s+100\.00 USD \(100\.00 available, 0\.00 reserved\)/);
    expect(result.stdout).toMatch(/runs in flight\s+0 of 10/);
  });
});

describe("refvid models", () => {
  it("lists the models with their prices", async () => {
    const result = await cli(["models"], { env: account.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/model-d\s+│ lab-d\/model-d\/reference-to-video │ 0\.071–0\.106 USD\/s/);
    const json = JSON.parse((await cli(["models", "--json"], { env: account.env })).stdout);
    expect(json.data.map((m: any) => m.name)).toEqual(["model-a", "model-b", "model-c", "model-d"]);
  });

  it("shows one model's flags, references and prices", async () => {
    const result = await cli(["models", "model-b"], { env: account.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/slug\s+lab-b\/model-b\/reference-to-video/);
    expect(result.stdout).toMatch(/video \(--video\): mp4\/mov, 2–15 s each/);
    expect(result.stdout).toMatch(/│ --seed\s+│ integer/);
    expect(result.stdout).toMatch(/│ --image\s+│ url \(repeatable\)/);
    const json = JSON.parse(
      (await cli(["models", "lab-c/model-c/reference-to-video", "--json"], { env: account.env })).stdout,
    );
    expect(json).toMatchObject({ name: "model-c", limits: { max_duration_seconds: 15 } });
    const unknown = await cli(["models", "model-z"], { env: account.env });
    expect(unknown.code).toBe(2);
  });
});
