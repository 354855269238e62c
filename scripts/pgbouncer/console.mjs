#!/usr/bin/env node
/**
 * Reads PgBouncer's admin console (the `pgbouncer` database) for scripts/pgbouncer/test.sh, to
 * prove that the tests' traffic went through the pooler:
 *
 *   node console.mjs <admin-url> stats <prefix>          transactions and queries PgBouncer has
 *                                                        carried for databases named <prefix>*
 *   node console.mjs <admin-url> watch <prefix> <file>   until SIGTERM: the most client connections
 *                                                        to databases named <prefix>* seen at once
 *                                                        (SHOW CLIENTS every 100 ms), written to <file>
 *
 * The console speaks only the simple query protocol: pg sends a query without parameters that way.
 */
import { writeFileSync } from "node:fs";
import pg from "pg";

const [url, command, prefix = "", file] = process.argv.slice(2);
if (!url || !["stats", "watch"].includes(command ?? "") || (command === "watch" && !file)) {
  process.stderr.write("usage: console.mjs <admin-url> stats <prefix> | watch <prefix> <file>\n");
  process.exit(2);
}

const client = new pg.Client({ connectionString: url });
await client.connect();
const ours = (rows) => rows.filter((r) => String(r.database).startsWith(prefix));

if (command === "stats") {
  const { rows } = await client.query("show stats");
  const sum = (column) => ours(rows).reduce((total, r) => total + Number(r[column]), 0);
  process.stdout.write(`${sum("total_xact_count")} ${sum("total_query_count")} ${ours(rows).length}\n`);
  await client.end();
} else {
  let most = 0;
  let stopping = false;
  const write = () => writeFileSync(file, `${most}\n`);
  write();
  process.on("SIGTERM", () => {
    stopping = true;
  });
  while (!stopping) {
    const { rows } = await client.query("show clients");
    const count = ours(rows).length;
    if (count > most) {
      most = count;
      write();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await client.end();
}
