// Runs wrk (1 thread) against one server with a list of requests sent in turn, and returns its
// summary: requests per second, p50 and p99 latency, and every request that did not get a 2xx.
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("./load.lua", import.meta.url));

/** CPU time a process has used (user + system), in milliseconds. */
async function cpuMsOf(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime: clock ticks of 10 ms
}

/** The machine's CPU time by kind, from /proc/stat (the first line). */
async function machineTicks() {
  const [, ...ticks] = (await readFile("/proc/stat", "utf8")).split("\n", 1)[0].trim().split(/\s+/);
  return ticks.map(Number);
}

/**
 * `requests`: `{ method, path, key, body? }`. The list is written where wrk's script reads it
 * (`dir`), once per call. With `pid`, also the server's CPU time per request; always the share of
 * the machine's time the hypervisor took (steal), which makes a run slower for no fault of its own.
 */
export async function wrk(url, requests, { seconds, connections, dir, warmupSeconds = 2, pid }) {
  const file = join(dir, `requests-${Date.now()}-${Math.random().toString(36).slice(2)}.tsv`);
  const lines = requests.map((r) =>
    [r.method, r.path, r.key, r.body ? JSON.stringify(r.body) : ""].join("\t"),
  );
  await writeFile(file, `${lines.join("\n")}\n`);
  const once = async (duration) => {
    const { stdout } = await run(
      "wrk",
      ["-t1", `-c${connections}`, `-d${duration}s`, "--timeout", "10s", "-s", SCRIPT, url],
      { env: { ...process.env, BENCH_REQUESTS: file }, maxBuffer: 1 << 20 },
    );
    const line = stdout.split("\n").find((l) => l.startsWith("{"));
    if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
    return JSON.parse(line);
  };
  if (warmupSeconds > 0) await once(warmupSeconds);
  const cpuBefore = pid ? await cpuMsOf(pid) : 0;
  const ticksBefore = await machineTicks();
  const s = await once(seconds);
  const cpuMs = pid ? (await cpuMsOf(pid)) - cpuBefore : null;
  const ticks = (await machineTicks()).map((t, i) => t - (ticksBefore[i] ?? 0));
  const total = ticks.reduce((a, b) => a + b, 0);
  const errors = s.non2xx + s.connect_errors + s.read_errors + s.write_errors + s.timeouts;
  return {
    rps: s.requests / (s.duration_us / 1e6),
    p50: s.p50_us / 1000,
    p99: s.p99_us / 1000,
    max: s.max_us / 1000,
    requests: s.requests,
    errors,
    non2xx: s.non2xx,
    cpuUsPerRequest: cpuMs === null ? null : (cpuMs * 1000) / s.requests,
    steal: total > 0 ? (ticks[7] ?? 0) / total : 0,
  };
}
