export { type Database, pgDatabase, pgliteDatabase, type Queryable } from "./database.js";
export { migrate } from "./migrate.js";
export { PostgresStore } from "./postgres-store.js";
export { searchRunsQuery } from "./queries/search-runs.js";
