export { MemoryStore } from "./memory-store.js";
export {
  type Database,
  migrate,
  PostgresStore,
  pgDatabase,
  pgliteDatabase,
  type Queryable,
  searchRunsQuery,
} from "./postgres/index.js";
export { TEST_SERVER_URL, type TestDatabases, testDatabases } from "./postgres/test-databases.js";
export type * from "./types.js";
