/** Help, and bad usage: exit 2 with a message that says what to fix, and nothing on stdout. */
import { beforeAll, describe, expect, it } from "vitest";
import { type Account, cli, freePort, IMAGE, newAccount } from "./cli.js";

let account: Account;
beforeAll(async () => {
  account = await newAccount();
});

describe("help", () => {
  it("lists the commands, the configuration and the exit codes", async () => {
    const result = await cli(["--help"]);
    expect(result.code).toBe(0);
    for (const command of [
      "run",
      "runs",
      "price",
      "files",
      "login",
      "account",
      "usage",
      "models",
      "webhooks",
      "admin",
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    }
    expect(result.stdout).toContain("REFVID_BASE_URL");
    expect(result.stdout).toContain("Exit codes:");
  });

  it("shows a model's input flags, descriptions, choices and defaults, read from the server", async () => {
    const result = await cli(["run", "model-a", "--help"], { env: account.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Input of model-a (lab-a/model-a/reference-to-video):");
    expect(result.stdout).toMatch(/--image <url\|file>\s+Image references/);
    expect(result.stdout).toMatch(/--video <url\|file>/);
    expect(result.stdout).toMatch(/--audio <url\|file>/);
    expect(result.stdout.replace(/\s+/g, " ")).toContain(
      "or the path of a local file: such a file is uploaded",
    );
    expect(result.stdout).toMatch(
      /--bitrate-mode <value>\s+`high` gives higher quality[^-]*default: "standard"\)\s+\(choices:\s+"standard",\s+"high"\)/,
    );
    expect(result.stdout).toMatch(/--no-generate-audio/);
    const b = await cli(["price", "model-b", "--help"], { env: account.env });
    expect(b.stdout).toMatch(/--seed <n>/);
    expect(b.stdout).toMatch(/--image <url\|file>\s+Subject or style references/); // reference_image_urls
  });

  it("without a model, says where the model's flags come from", async () => {
    const result = await cli(["run", "--help"], { env: account.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Models: model-a, model-b, model-c, model-d");
    const offline = await cli(["run", "--help"]);
    expect(offline.code).toBe(0);
    expect(offline.stdout).toContain("refvid run <model> --help");
  });

  it("has help for each subcommand", async () => {
    for (const args of [
      ["runs", "list"],
      ["webhooks", "listen"],
      ["admin", "keys", "create"],
      ["login"],
      ["files", "upload"],
      ["files", "delete"],
    ]) {
      const result = await cli([...args, "--help"]);
      expect(result.code, args.join(" ")).toBe(0);
      expect(result.stdout).toMatch(/^Usage: refvid /);
    }
  });
});

describe("bad usage exits 2", () => {
  const cases: [string, string[], RegExp][] = [
    [
      "an unknown flag",
      ["run", "model-d", "--prompt", "p", "--image", IMAGE, "--bogus"],
      /unknown option '--bogus'/,
    ],
    ["a missing model", ["run"], /missing required argument 'model'/],
    [
      "an unknown model",
      ["run", "model-z", "--prompt", "p"],
      /unknown model "model-z"\. Models: model-a, model-b/,
    ],
    [
      "a value outside the choices",
      ["run", "model-d", "--prompt", "p", "--duration", "5s"],
      /'--duration <value>' argument '5s' is invalid\. Allowed choices are 4s, 6s, 8s/,
    ],
    ["a missing required field", ["run", "model-d", "--prompt", "p", "--yes"], /model-d needs --image/],
    [
      "a reference that is not a URL",
      ["price", "model-d", "--prompt", "p", "--image", "ftp://x"],
      /--image "ftp:\/\/x" must be an http:\/\/ or https:\/\/ URL/,
    ],
    [
      "too many references",
      ["price", "model-d", "--prompt", "p", ...Array(5).fill(["--image", IMAGE]).flat()],
      /--image takes at most 4 \(got 5\)/,
    ],
    [
      "a number that is not one",
      ["price", "model-b", "--prompt", "p", "--seed", "seven"],
      /--seed takes a whole number/,
    ],
    [
      "bad --input JSON",
      ["price", "model-d", "--input", "{oops"],
      /--input <json>' argument '\{oops' is invalid\. Not valid JSON/,
    ],
    [
      "a bad status filter",
      ["runs", "list", "--status", "done"],
      /--status <status>' argument 'done' is invalid/,
    ],
    ["a bad --since", ["runs", "list", "--since", "yesterday"], /Use a date .* or an age/],
    ["a bad --metadata", ["runs", "list", "--metadata", "novalue"], /Use key=value/],
    ["an unknown command", ["runz"], /unknown command 'runz'/],
    ["a missing run id", ["runs", "get"], /missing required argument 'run_id'/],
  ];
  it.each(cases)("for %s", async (_name, args, message) => {
    const result = await cli(args, { env: account.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });

  it("without a server configured, says how to configure one", async () => {
    const result = await cli(["account"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("run `refvid login`, or set REFVID_BASE_URL and REFVID_API_KEY");
    const run = await cli(["run", "model-d", "--prompt", "p"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("refvid login");
  });
});

describe("API errors exit 3", () => {
  it("prints the API's message and request id", async () => {
    const result = await cli(["runs", "get", "run_00000000-0000-4000-8000-000000000000"], {
      env: account.env,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(
      /error: No run run_0{8}-\S+ in this organization\. \(run_not_found, HTTP 404\)/,
    );
    expect(result.stderr).toMatch(/request id: req_/);
  });

  it("says when to retry after a 429", async () => {
    const limited = await newAccount({ rateLimitPerMinute: 1 });
    expect((await cli(["account"], { env: limited.env })).code).toBe(0);
    const result = await cli(["account", "--json"], { env: limited.env });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/rate_limit_exceeded, HTTP 429/);
    expect(result.stderr).toMatch(/retry in \d+ s \(at /);
    expect(JSON.parse(result.stdout).error).toMatchObject({ type: "rate_limit_exceeded", status: 429 });
    expect(JSON.parse(result.stdout).error.retry_after_seconds).toBeGreaterThan(20);
  });

  it("says when the server cannot be reached", async () => {
    const port = await freePort();
    const result = await cli(["account"], {
      env: { REFVID_BASE_URL: `http://127.0.0.1:${port}`, REFVID_API_KEY: "sk-test-x" },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`could not reach the refvid server at 127.0.0.1:${port} (ECONNREFUSED)`);
  });

  it("an unknown key is a 401", async () => {
    const result = await cli(["models", "--json"], {
      env: { ...account.env, REFVID_API_KEY: "sk-test-unknown" },
    });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout).error).toMatchObject({ type: "unauthorized", status: 401 });
  });
});
