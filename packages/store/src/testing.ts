/**
 * What tests of the store and of its users need, apart from the store itself: fresh migrated
 * Postgres databases, and the Store contract suite every adapter runs. Import it from
 * `@refvid/store/testing`; the main entry stays free of test code and of environment reads.
 */
export * from "./contract/index.js";
export {
  DESTROY_TIMEOUT_MS,
  TEST_SERVER_URL,
  type TestDatabases,
  testDatabases,
} from "./postgres/test-databases.js";
