/** `refvid runs get|cancel|list|watch|download`. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Account, cli, ESC, newAccount, pty, submitRun, tempDir } from "./cli.js";

let account: Account;
/** A run that succeeded and one that failed, made before the tests. */
let succeeded: any;
let failed: any;

beforeAll(async () => {
  account = await newAccount();
  const done = await cli(
    ["run", "model-d", "--prompt", "p", "--image", "https://example.com/a.png"].concat([
      "--duration",
      "4s",
      "--metadata",
      "batch=b1",
      "--yes",
      "--json",
    ]),
    { env: account.env },
  );
  succeeded = JSON.parse(done.stdout);
  const bad = await cli(
    ["run", "model-d", "--prompt", "x [simulate:fail]", "--image", "https://example.com/a.png"].concat([
      "--metadata",
      "batch=b1",
      "--yes",
      "--json",
    ]),
    { env: account.env },
  );
  failed = JSON.parse(bad.stdout);
});

const refvid = (...args: string[]) => cli(args, { env: account.env });

describe("refvid runs", () => {
  it("get shows a run, in JSON and for people", async () => {
    const json = await refvid("runs", "get", succeeded.run_id, "--json");
    expect(json.code).toBe(0);
    const run = JSON.parse(json.stdout);
    expect(run).toMatchObject({ run_id: succeeded.run_id, status: "succeeded" });
    const shown = await refvid("runs", "get", succeeded.run_id);
    expect(shown.stdout).toMatch(/^video\s+http\S+$/m);
    expect(shown.stdout).toContain(`poster       ${run.output.videos[0].thumbnail_url}\n`);
    const human = await refvid("runs", "get", failed.run_id);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^run\s+run_/);
    expect(human.stdout).toMatch(/status\s+failed/);
    expect(human.stdout).toMatch(/error\s+The simulated provider was told to fail/);
    expect(human.stdout).not.toContain(ESC); // no colours off a terminal
  });

  it("list filters by status, model, metadata and time, newest first", async () => {
    const all = JSON.parse((await refvid("runs", "list", "--json")).stdout);
    expect(all.map((r: any) => r.run_id)).toEqual([failed.run_id, succeeded.run_id]);

    const onlyFailed = JSON.parse(
      (await refvid("runs", "list", "--status", "failed,timeout", "--model", "model-d", "--json")).stdout,
    );
    expect(onlyFailed.map((r: any) => r.run_id)).toEqual([failed.run_id]);

    const byMetadata = await refvid(
      "runs",
      "list",
      "--metadata",
      "batch=b1",
      "--since",
      "1h",
      "--limit",
      "1",
      "--json",
    );
    expect(JSON.parse(byMetadata.stdout).map((r: any) => r.run_id)).toEqual([failed.run_id]);

    const none = await refvid("runs", "list", "--until", "2020-01-01", "--json");
    expect(JSON.parse(none.stdout)).toEqual([]);
    expect((await refvid("runs", "list", "--model", "model-a")).stdout).toBe("No runs match.\n");

    const table = await refvid("runs", "list");
    expect(table.stdout).toMatch(/RUN\s+│ MODEL\s+│ STATUS/);
    expect(table.stdout).toContain(`${succeeded.run_id} │ model-d │ succeeded │`);
  });

  it("watch follows a run in flight to its end", async () => {
    const run = await submitRun(account, "p [simulate:delay=600]");
    const result = await refvid("runs", "watch", run.run_id);
    expect(result.code).toBe(0);
    expect(result.stderr.split("\n")).toContain(`${run.run_id} succeeded 100%`);
    expect(result.stdout).toMatch(/^✔ run_\S+ succeeded in/);
  });

  it("watch draws a bar in a terminal", async () => {
    const run = await submitRun(account, "p [simulate:delay=600]");
    const { code, output } = await pty(["runs", "watch", run.run_id], { env: account.env }).done;
    expect(code).toBe(0);
    expect(output).toMatch(/█{30} 100% \|/);
  });

  it("watch exits 1 for a run that failed, with the run as JSON", async () => {
    const result = await refvid("runs", "watch", failed.run_id, "--json");
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ run_id: failed.run_id, status: "failed" });
  });

  it("cancel cancels a run in flight; cancelling it again is a 409 (exit 3)", async () => {
    const run = await submitRun(account, "p [simulate:delay=20000]");
    const result = await refvid("runs", "cancel", run.run_id, "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ run_id: run.run_id, status: "cancelled" });
    const again = await refvid("runs", "cancel", run.run_id);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/HTTP 409/);
    const watched = await refvid("runs", "watch", run.run_id);
    expect(watched.code).toBe(1); // cancelled is not a success
  });

  it("download saves the video, to <run_id>.mp4 or the file given", async () => {
    const dir = tempDir();
    const byDefault = await cli(["runs", "download", succeeded.run_id, "--json"], {
      env: account.env,
      cwd: dir,
    });
    expect(byDefault.code).toBe(0);
    expect(JSON.parse(byDefault.stdout).download.path).toBe(`${succeeded.run_id}.mp4`);
    expect(
      readFileSync(join(dir, `${succeeded.run_id}.mp4`))
        .subarray(4, 8)
        .toString("latin1"),
    ).toBe("ftyp");

    const named = await cli(["runs", "download", succeeded.run_id, "clip.mp4"], {
      env: account.env,
      cwd: dir,
    });
    expect(named.code).toBe(0);
    expect(named.stdout).toMatch(/^Saved clip\.mp4 \(/);
    expect(readFileSync(join(dir, "clip.mp4")).subarray(4, 8).toString("latin1")).toBe("ftyp");
  });

  it("download waits for a run in flight, and exits 1 for a run without a video", async () => {
    const dir = tempDir();
    const run = await submitRun(account, "p [simulate:delay=500]");
    const waited = await cli(["runs", "download", run.run_id, "late.mp4"], { env: account.env, cwd: dir });
    expect(waited.code).toBe(0);
    expect(readFileSync(join(dir, "late.mp4")).subarray(4, 8).toString("latin1")).toBe("ftyp");

    const none = await refvid("runs", "download", failed.run_id);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`${failed.run_id} is failed: there is no video to download`);
  });
});
