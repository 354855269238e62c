import { afterAll, afterEach, beforeAll } from "vitest";
import { describeStoreContract } from "../contract/index.js";
import { type TestDatabases, testDatabases } from "./test-databases.js";

let databases: TestDatabases;
beforeAll(async () => {
  databases = await testDatabases();
});
afterEach(async () => databases.cleanup());
afterAll(async () => databases.destroy());

describeStoreContract("PostgresStore on a Postgres server", () => databases.store());
