/** Absolute path of the built console's page (apps/console/dist/index.html); the server serves it at /console. */
export declare const consoleHtmlPath: string;
