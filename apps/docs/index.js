import { fileURLToPath } from "node:url";

/**
 * Absolute path of the built API reference page (a single self-contained HTML file).
 * It exists after `npm run build -w @refvid/docs`; the server serves it at /docs.
 */
export const docsHtmlPath = fileURLToPath(new URL("./dist/index.html", import.meta.url));
