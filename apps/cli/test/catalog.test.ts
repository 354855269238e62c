/**
 * A model the operator's catalog adds, with fields the CLI has never seen: a server of its own
 * started with a small catalog file (the model has no routes, so the simulated provider serves it),
 * and `refvid run`, `price`, `models` and `runs list` used on it with flags read from its schema.
 */
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, cli, IMAGE, newAccount, tempDir } from "./cli.js";
import { type RefvidServer, startRefvidServer } from "./refvid-server.js";

const SLUG = "acme/clip-maker/image-to-video";
const STILL = "acme/still/image-to-video";
const REFS = fileURLToPath(new URL("../../../docs/examples/refs/", import.meta.url));

/** YAML is a superset of JSON: the catalog file is written as JSON, in a `.yaml` file. */
const CATALOG = {
  models: {
    [SLUG]: {
      name: "Clip Maker",
      summary: "A clip from one or two start frames, 1 to 6 s.",
      input_schema: {
        type: "object",
        additionalProperties: false,
        required: ["prompt", "start_frames"],
        properties: {
          prompt: { type: "string", minLength: 1, description: "What happens in the clip." },
          start_frames: {
            type: "array",
            minItems: 1,
            maxItems: 2,
            items: { type: "string", format: "uri" },
            description: "Frames to start from.",
          },
          seconds: {
            type: "integer",
            minimum: 1,
            maximum: 6,
            default: 3,
            description: "Length of the clip.",
          },
          style: { type: "string", enum: ["film", "anime", "clay"], default: "film" },
          loop: { type: "boolean", default: false, description: "End where it starts." },
          no_watermark: { type: "boolean", default: false, description: "Leave the watermark out." },
          fps: { type: "integer", enum: [24, 30] },
          seed: { anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }], default: null },
        },
      },
      fields: { prompt: "prompt", duration: "seconds" },
      max_duration_seconds: 6,
      references: { image: { field: "start_frames" } },
      pricing: [{ when: { style: "anime" }, usd_per_second: "0.20" }, { usd_per_second: "0.10" }],
    },
    // One reference given as a single URL rather than a list, as a catalog model's may be; a price per run.
    [STILL]: {
      name: "still",
      summary: "A clip from one image.",
      input_schema: {
        type: "object",
        required: ["prompt", "image_url"],
        properties: { prompt: { type: "string" }, image_url: { type: "string", format: "uri" } },
      },
      fields: { prompt: "prompt" },
      max_duration_seconds: 4,
      references: { image: { field: "image_url" } },
      pricing: [{ usd_per_run: "0.25" }],
    },
  },
};

let server: RefvidServer;
let account: Account;

beforeAll(async () => {
  const file = join(tempDir("catalog-"), "catalog.yaml");
  writeFileSync(file, JSON.stringify(CATALOG, null, 2));
  server = await startRefvidServer({ REFVID_CATALOG_FILE: file });
  account = await newAccount({ server });
});

afterAll(async () => {
  await server?.stop();
});

const refvid = (args: string[]) => cli(args, { env: account.env });

describe("a catalog model", () => {
  it("gets its flags from its schema, listed by --help", async () => {
    const result = await refvid(["run", "clip-maker", "--help"]);
    expect(result.code).toBe(0);
    const help = result.stdout.replace(/\s+/g, " ");
    expect(help).toContain(`Input of Clip Maker (${SLUG}):`);
    expect(help).toContain("--prompt <text> What happens in the clip. (required)");
    expect(help).toContain("--image <url|file> Frames to start from. (required; repeat for more, up to 2)");
    expect(help).toContain("--seconds <n> Length of the clip. (1 to 6; default: 3)");
    expect(help).toContain('--style <value> (default: "film") (choices: "film", "anime", "clay")');
    expect(help).toContain("--loop End where it starts. (default: false) --no-loop Turn --loop off.");
    // A field named no_… would read as turning a flag off: it gets --input-….
    expect(help).toContain("--input-no-watermark Leave the watermark out.");
    expect(help).toContain('--fps <n> (choices: "24", "30")');
    expect(help).toContain("--seed <n> (at least 0)");
    expect(help).toContain("0.20 USD/s anime");
  });

  it("shows a price per run as one", async () => {
    const price = await refvid(["price", "still", "--prompt", "p", "--image", IMAGE]);
    expect(price.code, price.stderr).toBe(0);
    expect(price.stdout).toMatch(/amount\s+0\.25 USD\n[\s\S]*unit price\s+0\.25 USD a run/);
    const models = await refvid(["models"]);
    expect(models.stdout).toMatch(/still\s+│ acme\/still\/image-to-video\s+│ 0\.25 USD a run /);
  });

  it("prices an input given with its flags", async () => {
    const args = [
      "price",
      "clip-maker",
      "--prompt",
      "p",
      "--image",
      IMAGE,
      "--seconds",
      "4",
      "--style",
      "anime",
    ];
    const result = await refvid([...args, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      endpoint: SLUG,
      currency: "usd",
      unit_price: "0.20",
      billable_seconds: 4,
      amount: "0.80",
      price_tier: "anime",
    });
  });

  it("runs to a video with every kind of flag the schema makes", async () => {
    const result = await refvid([
      "run",
      SLUG,
      "--prompt",
      "A paper boat",
      "--image",
      IMAGE,
      "--image",
      IMAGE,
      "--seconds",
      "2",
      "--loop",
      "--input-no-watermark",
      "--fps",
      "30",
      "--seed",
      "7",
      "--metadata",
      "suite=catalog",
      "--yes",
      "--json",
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^Price: 0\.20 USD for 2 s at 0\.10 USD\/s \(every input\)/);
    const run = JSON.parse(result.stdout);
    expect(run).toMatchObject({ status: "succeeded", endpoint: SLUG, mode: "image-to-video" });
    expect(run.billing).toMatchObject({ billable_seconds: 2, amount: "0.20" });
    expect(run.output.videos).toHaveLength(1);

    const list = await refvid([
      "runs",
      "list",
      "--model",
      "clip-maker",
      "--metadata",
      "suite=catalog",
      "--json",
    ]);
    expect(JSON.parse(list.stdout).map((r: { run_id: string }) => r.run_id)).toEqual([run.run_id]);
    const table = await refvid(["runs", "list", "--model", "clip-maker"]);
    expect(table.stdout).toMatch(new RegExp(`${run.run_id} │ clip-maker +│ succeeded`));
  });

  it("uploads a local file given for a reference field that takes one URL", async () => {
    const dir = tempDir();
    copyFileSync(join(REFS, "sculpture.png"), join(dir, "frame.png"));
    const result = await cli(["run", "still", "--prompt", "p", "--image", "./frame.png", "--yes", "--json"], {
      env: account.env,
      cwd: dir,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/Uploaded \.\/frame\.png \(\d+ KB\) as upload_/);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "succeeded", endpoint: STILL });
  });

  it("refuses a value the schema does not take, naming the flag, before any request", async () => {
    const base = ["run", "clip-maker", "--prompt", "p", "--image", IMAGE, "--yes"];
    for (const [args, message] of [
      [
        ["--style", "watercolor"],
        /--style <value>' argument 'watercolor' is invalid\. Allowed choices are film, anime, clay/,
      ],
      [["--fps", "25"], /--fps <n>' argument '25' is invalid\. Allowed choices are 24, 30/],
      [["--seconds", "9"], /--seconds must be at most 6/],
      [["--seconds", "2.5"], /--seconds takes a whole number/],
    ] as const) {
      const result = await refvid([...base, ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
    }
  });

  it("is listed and shown by refvid models, named as refvid run finds it", async () => {
    const list = await refvid(["models"]);
    expect(list.stdout).toMatch(/Clip Maker +│ acme\/clip-maker\/image-to-video +│ 0\.10–0\.20 USD\/s/);
    const shown = await refvid(["models", "clip-maker"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/│ --input-no-watermark +│ boolean/);
    expect(shown.stdout).toMatch(/│ --fps +│ integer +│ 24, 30/);
    expect(shown.stdout).toContain("refvid run clip-maker --help");
    const unknown = await refvid(["run", "Clip", "--prompt", "p"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'unknown model "Clip". Models: model-a, model-b, model-c, model-d, clip-maker',
    );
  });
});
