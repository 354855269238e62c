// Serves the sample references in docs/examples/refs on http://localhost:9001 (or $SAMPLES_PORT),
// for the README's walk-through: refvid downloads references from URLs, and local URLs are
// allowed outside production.
import { createReadStream, existsSync } from "node:fs";
import { createServer } from "node:http";
import { basename, extname, join } from "node:path";

const dir = new URL("../docs/examples/refs/", import.meta.url).pathname;
const given = process.env.SAMPLES_PORT;
const port = given === undefined ? 9001 : Number(given);
if (!/^\s*\d+\s*$/.test(given ?? "9001") || port < 1 || port > 65535) {
  process.stderr.write(`SAMPLES_PORT must be a port (1 to 65535), not ${JSON.stringify(given)}\n`);
  process.exit(2);
}
const types = { ".png": "image/png", ".jpg": "image/jpeg", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".mp4": "video/mp4" };

createServer((req, res) => {
  const name = basename(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
  const path = join(dir, name);
  if (!name || !existsSync(path)) return res.writeHead(404).end("not found\n");
  res.writeHead(200, { "content-type": types[extname(name)] ?? "application/octet-stream" });
  createReadStream(path).pipe(res);
}).listen(port, () => process.stdout.write(`serving ${dir} on http://localhost:${port}/\n`));
