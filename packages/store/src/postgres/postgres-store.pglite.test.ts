import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll } from "vitest";
import { describeStoreContract } from "../contract/index.js";
import type { Database } from "./database.js";
import { migrate } from "./migrate.js";
import { pgliteDatabase } from "./pglite-database.js";
import { PostgresStore } from "./postgres-store.js";

// One embedded database for the file (it takes seconds to start); each store starts it empty.
let pglite: PGlite;
let db: Database;
beforeAll(async () => {
  pglite = new PGlite();
  db = pgliteDatabase(pglite);
  await migrate(db);
});
afterAll(async () => pglite.close());

const TABLES =
  "queue_counts, queue_turns, uploads, vendor_events, webhook_attempts, webhook_deliveries, idempotency_keys, rate_windows, runs, top_ups, api_keys, organizations";

describeStoreContract("PostgresStore on PGlite", async () => {
  await db.query(`truncate ${TABLES}`);
  return new PostgresStore({ ...db, close: async () => {} });
});
