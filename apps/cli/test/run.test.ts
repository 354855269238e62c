/** `refvid run` and `refvid price`: price, confirmation, submit, live progress, download, exit codes. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Account, cli, ESC, IMAGE, newAccount, pty, tempDir } from "./cli.js";

let account: Account;
beforeAll(async () => {
  account = await newAccount();
});

const run = (args: string[], cwd?: string) => cli(["run", "model-d", ...args], { env: account.env, cwd });

describe("refvid run", () => {
  it("prices, submits, follows and downloads an MP4, with one JSON document on stdout", async () => {
    const dir = tempDir();
    const result = await run(
      [
        "--prompt",
        "A slow dolly shot",
        "--image",
        IMAGE,
        "--duration",
        "4s",
        "--yes",
        "--json",
        "--download",
      ],
      dir,
    );
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({ status: "succeeded", endpoint: "lab-d/model-d/reference-to-video" });
    expect(doc.billing).toMatchObject({ billable_seconds: 4, amount: "0.284" });
    expect(doc.download.path).toBe(`${doc.run_id}.mp4`);
    const video = readFileSync(join(dir, `${doc.run_id}.mp4`));
    expect(video.length).toBe(doc.download.bytes);
    expect(video.subarray(4, 8).toString("latin1")).toBe("ftyp");
    // The price comes first, then the run id, before the run ends.
    expect(result.stderr).toMatch(/^Price: 0\.284 USD for 4 s at 0\.071 USD\/s \(720p\)/);
    expect(result.stderr).toContain(`Submitted ${doc.run_id}`);
  });

  it("saves to the file named after --download, and prints a human summary", async () => {
    const dir = tempDir();
    const result = await run(
      ["--prompt", "p", "--image", IMAGE, "--image", IMAGE, "--yes", "--download", "out.mp4"],
      dir,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Saved out\.mp4 \(\d+\.\d\d MB\)\n✔ run_\S+ succeeded in \d+\.\d s, 8 s of video, 0\.568 USD\n$/,
    );
    expect(readFileSync(join(dir, "out.mp4")).subarray(4, 8).toString("latin1")).toBe("ftyp");
  });

  it("piped, reports progress as plain lines without escape codes", async () => {
    const result = await run(["--prompt", "p", "--image", IMAGE, "--yes"]);
    expect(result.code).toBe(0);
    const runId = /Submitted (run_\S+)\./.exec(result.stderr)?.[1];
    const lines = result.stderr.split("\n");
    expect(lines).toContain(`${runId} queued`);
    expect(lines).toContain(`${runId} succeeded 100%`);
    expect(lines.some((l) => new RegExp(`^${runId} processing \\d+%$`).test(l))).toBe(true);
    expect(result.stderr + result.stdout).not.toContain(ESC);
    expect(result.stderr).not.toContain("\r");
    expect(result.stderr).not.toMatch(/[█░]/);
    expect(result.stdout).toContain("http://"); // the video URL
  });

  it("in a terminal, draws a progress bar that reaches 100%", async () => {
    const session = pty(["run", "model-d", "--prompt", "p", "--image", IMAGE, "--yes"], { env: account.env });
    const { code, output } = await session.done;
    expect(code).toBe(0);
    expect(output).toMatch(/░{10,}\s+0% \| .*queued/); // the empty bar
    expect(output).toMatch(/█{30} 100% \| .*succeeded/); // the full bar
    expect(output).toContain(`${ESC}?25l`); // the cursor hidden while it draws
    expect(output).toContain(`${ESC}32m✔`); // colours on a terminal
  });

  it("in a terminal with NO_COLOR set, still draws the bar, without colours", async () => {
    const env = { ...account.env, NO_COLOR: "1" };
    const { code, output } = await pty(["run", "model-d", "--prompt", "p", "--image", IMAGE, "--yes"], {
      env,
    }).done;
    expect(code).toBe(0);
    expect(output).toMatch(/█{30} 100% \| succeeded/);
    const colours = [31, 32, 33, 36].map((n) => `${ESC}${n}m`); // red, green, yellow, cyan
    expect(colours.filter((c) => output.includes(c))).toEqual([]);
  });

  it("in a terminal, asks to confirm the price, and submits nothing when told no", async () => {
    const session = pty(["run", "model-d", "--prompt", "p", "--image", IMAGE], { env: account.env });
    await session.waitFor("Submit this run for 0.568 USD?");
    session.type("n\r");
    const { code, output } = await session.done;
    expect(code).toBe(0);
    expect(output).toContain("Not submitted.");
    expect(output).not.toContain("Submitted run_");
  });

  it("in a terminal, submits once confirmed", async () => {
    const session = pty(["run", "model-d", "--prompt", "p", "--image", IMAGE], { env: account.env });
    await session.waitFor("Submit this run for");
    session.type("y\r");
    const { code, output } = await session.done;
    expect(code).toBe(0);
    expect(output).toMatch(/Submitted run_/);
  });

  it("refuses without --yes when stdin is not a terminal (exit 2), and submits nothing", async () => {
    const result = await run(["--prompt", "never submitted", "--image", IMAGE]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pass --yes");
    expect(result.stdout).toBe("");
    const list = await cli(["runs", "list", "--json", "--metadata", "never=submitted"], { env: account.env });
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it("exits 1 when the run fails, with the failed run as the JSON document", async () => {
    const result = await run([
      "--prompt",
      "x [simulate:fail]",
      "--image",
      IMAGE,
      "--yes",
      "--json",
      "--download",
    ]);
    expect(result.code).toBe(1);
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({ status: "failed", error: { type: "provider_error" }, output: null });
    expect(doc.download).toBeUndefined();
  });

  it("exits 1 with the reason in human output", async () => {
    const result = await run(["--prompt", "x [simulate:fail]", "--image", IMAGE, "--yes"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✖ run_\S+ ended failed: .*\(provider_error\)/);
  });

  it("accepts the full slug and extra fields as --input JSON, and passes --metadata on", async () => {
    const result = await cli(
      [
        "run",
        "lab-d/model-d/reference-to-video",
        "--input",
        `{"prompt": "from json", "image_urls": ["${IMAGE}"]}`,
      ].concat(["--resolution", "1080p", "--no-generate-audio", "--metadata", "order=42", "--yes", "--json"]),
      { env: account.env },
    );
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.metadata).toEqual({ order: "42" });
    expect(doc.billing.unit_price).toBe("0.106");
  });

  it("exits 3 with the flag named when the API refuses a field", async () => {
    const result = await run([
      "--prompt",
      "p",
      "--image",
      IMAGE,
      "--yes",
      "--webhook-url",
      "not a url",
      "--json",
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/--webhook-url \(body\.webhook_url\): /);
    const doc = JSON.parse(result.stdout);
    expect(doc.error).toMatchObject({ type: "invalid_request", status: 400 });
    expect(doc.error.fields[0]).toMatchObject({ field: "body.webhook_url", flag: "--webhook-url" });
  });

  it("names --webhook-events when an event is not one refvid sends", async () => {
    const result = await run([
      "--prompt",
      "p",
      "--image",
      IMAGE,
      "--yes",
      "--webhook-url",
      "http://127.0.0.1:9/hook",
      "--webhook-events",
      "started,finished",
      "--json",
    ]);
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout).error.fields[0]).toMatchObject({ flag: "--webhook-events" });
  });
});

describe("refvid price", () => {
  it("prices an input with the model's flags", async () => {
    const result = await cli(
      ["price", "model-a", "--prompt", "p", "--duration", "10", "--resolution", "1080p", "--json"],
      {
        env: account.env,
      },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      amount: "3.98",
      billable_seconds: 10,
      unit_price: "0.398",
    });
    const human = await cli(
      ["price", "model-a", "--prompt", "p", "--duration", "10", "--video", "https://example.com/v.mp4"],
      { env: account.env },
    );
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/amount\s+0\.97 USD/);
    expect(human.stdout).toMatch(/tier\s+720p, with video input/);
  });
});
