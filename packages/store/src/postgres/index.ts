export type { Database, Queryable } from "./database.js";
export { migrate } from "./migrate.js";
export { type PgDatabaseOptions, pgDatabase } from "./pg-database.js";
export { pgliteDatabase } from "./pglite-database.js";
export { PostgresStore } from "./postgres-store.js";
export { searchRunsQuery } from "./queries/search-runs.js";
