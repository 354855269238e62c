import { defineConfig } from "vitest/config";

/** The server's measurements that need its test servers (`npm run bench` runs them): not tests. */
export default defineConfig({
  test: {
    include: ["bench/*.ts"],
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
  },
});
