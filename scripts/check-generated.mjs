// Fails when the committed generated code differs from what `npm run gen` produces.
// `npm test` runs the gen task first, so any difference left in the work tree is drift.
import { execFileSync } from "node:child_process";

const git = (...args) => execFileSync("git", args, { encoding: "utf8" }).trim();

try {
  git("rev-parse", "--is-inside-work-tree");
} catch {
  process.stdout.write("check-generated: not a git checkout, skipping the drift check\n");
  process.exit(0);
}

const changed = git("status", "--porcelain", "--untracked-files=all", "--", ":(glob)**/src/generated/**");
if (changed) {
  process.stderr.write(
    `Generated code is out of sync with openapi/src:\n${changed}\n` +
      "Run `npm run gen` and commit the files under src/generated/.\n",
  );
  process.exit(1);
}
process.stdout.write("check-generated: generated code matches the spec\n");
