/**
 * Absolute path of the built API reference page (a single self-contained HTML file).
 * It exists after `npm run build -w @refvid/docs`; the server serves it at /docs.
 */
export declare const docsHtmlPath: string;
