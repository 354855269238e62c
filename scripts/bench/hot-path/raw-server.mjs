// The ceiling of Node itself for the hot-path bench: node:http answering every request with a
// fixed JSON body (after reading the request's body), no framework. Reported for reference.
//
//   PORT=8082 node scripts/bench/hot-path/raw-server.mjs
import { createServer } from "node:http";

const body = JSON.stringify({ run_id: "run_00000000-0000-4000-8000-000000000000", status: "queued" });
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(req.method === "POST" ? 201 : 200, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 8082), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
