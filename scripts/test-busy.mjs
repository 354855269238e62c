// `npm run test:busy`: `npm test` on a busy machine (issue 30). One CPU-bound process per core
// (a `node -e` busy loop; TEST_BUSY_PROCESSES sets another count) runs beside the whole suite, so
// a test that depends on the machine's speed (a tight wall-clock budget, a sleep instead of a
// wait for an event) fails here rather than on a loaded CI runner. Prints the wall time and the
// exit code of `npm test`, and exits with that code. Nothing is taken from turbo's cache.
// `npm test` stops at the first package whose tests fail (turbo's default), so a run that fails
// may not have run every package; the line printed at the end says how long it went.
//
// The busy processes are ended by their pids when the suite ends, fails, or is interrupted
// (SIGINT, SIGTERM, SIGHUP); each also ends by itself once this script is gone, so none outlives
// a `kill -9` of it.
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

const requested = process.env.TEST_BUSY_PROCESSES;
const count = requested === undefined ? availableParallelism() : Number(requested);
if (!Number.isInteger(count) || count < 0) {
  process.stderr.write(`TEST_BUSY_PROCESSES must be a whole number, not ${JSON.stringify(requested)}\n`);
  process.exit(2);
}

// Spins, and every few million turns checks that its parent is still this script.
const BUSY_LOOP = `const parent = ${process.pid};
for (let i = 1; ; i++) if ((i & 0xffffff) === 0 && process.ppid !== parent) process.exit(0);`;

const busy = Array.from({ length: count }, () =>
  spawn(process.execPath, ["-e", BUSY_LOOP], { stdio: "ignore" }),
);
const pids = busy.map((child) => child.pid).filter((pid) => pid !== undefined);

function stopBusy() {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
process.on("exit", stopBusy);

const started = performance.now();
const formatTime = (ms) => {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, "0")} s`;
};
process.stdout.write(`test:busy: ${pids.length} busy processes (pids ${pids.join(", ")}) beside npm test\n`);

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
// TURBO_FORCE: every task runs under the load, none is replayed from turbo's cache.
const suite = spawn(npm, ["test"], { stdio: "inherit", env: { ...process.env, TURBO_FORCE: "true" } });

let interrupted = null;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    // The terminal sends SIGINT to the suite too; a SIGTERM or SIGHUP is passed on to it.
    interrupted = signal;
    stopBusy();
    if (signal !== "SIGINT") suite.kill(signal);
  });
}

suite.on("error", (err) => {
  stopBusy();
  process.stderr.write(`test:busy: could not run npm test: ${err.message}\n`);
  process.exit(1);
});

suite.on("exit", (code, signal) => {
  stopBusy();
  const wall = formatTime(performance.now() - started);
  const outcome = signal ? `was ended by ${signal}` : `exited ${code}`;
  process.stdout.write(
    `\ntest:busy: npm test ${outcome} after ${wall} of wall time, beside ${count} busy processes` +
      `${interrupted ? ` (interrupted by ${interrupted})` : ""}\n`,
  );
  process.exit(code ?? 1);
});
