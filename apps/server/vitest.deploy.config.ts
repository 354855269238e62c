import { defineConfig } from "vitest/config";

/** The deploy tests (`npm run test:deploy`): the container image and the compose stack. */
export default defineConfig({
  test: {
    include: ["test/deploy/**/*.deploy.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // One file at a time: each builds or starts containers on a two-core machine.
    fileParallelism: false,
  },
});
