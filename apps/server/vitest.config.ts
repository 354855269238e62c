import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // End-to-end files each start a server and ffmpeg; two at a time suits a two-core machine.
    maxWorkers: 2,
    // The container image and compose stack have their own run: npm run test:deploy.
    exclude: [...configDefaults.exclude, "test/deploy/**"],
  },
});
