import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each test spawns node processes; two files at a time suits a two-core machine.
    maxWorkers: 2,
  },
});
