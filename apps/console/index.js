import { fileURLToPath } from "node:url";

/**
 * Absolute path of the built console's page. It exists after `npm run build -w @refvid/console`;
 * the server serves its folder at /console, with this page for every other path under it.
 */
export const consoleHtmlPath = fileURLToPath(new URL("./dist/index.html", import.meta.url));
