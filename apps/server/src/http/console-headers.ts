/** The headers the web console's files are served with (docs/decisions.md, "Console"). */
import type { Config } from "../config.js";

/**
 * The console's page may run only its own files and call only this origin; it is never framed
 * (clickjacking) and sends no referrer (its video links are signed bearer URLs). Videos and their
 * posters load from this origin, or from the S3 server that presigns them.
 */
export function consoleHeaders(config: Config): Record<string, string> {
  const store = config.blobStore;
  const s3 = store.kind === "s3" && store.presign ? (store.location.endpoint ?? "https:") : "";
  const files = s3 ? [s3 === "https:" ? s3 : new URL(s3).origin] : [];
  const media = ["'self'", "blob:", ...files].join(" ");
  const images = ["'self'", "data:", ...files].join(" ");
  return {
    "Content-Security-Policy": [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src ${images}`,
      `media-src ${media}`,
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join("; "),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
  };
}
