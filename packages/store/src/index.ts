export { isConnectionLost } from "./connection-lost.js";
export { MemoryStore } from "./memory-store.js";
export {
  type Database,
  migrate,
  type PgDatabaseOptions,
  PostgresStore,
  pgDatabase,
  pgliteDatabase,
  type Queryable,
  searchRunsQuery,
} from "./postgres/index.js";
export { MAX_ARRIVALS_COUNTED } from "./queue-types.js";
export { queuedRun } from "./queued-run.js";
export type * from "./types.js";
