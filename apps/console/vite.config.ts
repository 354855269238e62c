import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The server serves dist/ at /console; everything, fonts included, is bundled (nothing from a CDN).
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true },
  test: { include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 },
});
