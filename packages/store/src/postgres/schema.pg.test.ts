import { readFile, writeFile } from "node:fs/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeSchema } from "./describe-schema.js";
import { pgDatabase } from "./pg-database.js";
import { DESTROY_TIMEOUT_MS, type TestDatabases, testDatabases } from "./test-databases.js";

const COMMITTED = new URL("./schema.txt", import.meta.url);

let databases: TestDatabases;
beforeAll(async () => {
  databases = await testDatabases();
});
afterAll(async () => databases.destroy(), DESTROY_TIMEOUT_MS);

describe("the committed schema", () => {
  it("is what the migrations produce", async () => {
    const db = pgDatabase(new pg.Pool({ connectionString: await databases.create(), max: 1 }));
    const actual = await describeSchema(db);
    await db.close();
    if (process.env.REFVID_UPDATE_SCHEMA === "1") await writeFile(COMMITTED, actual);
    const committed = await readFile(COMMITTED, "utf8").catch(() => "");
    expect(
      actual,
      "the schema changed: in packages/store run REFVID_UPDATE_SCHEMA=1 npx vitest run src/postgres/schema.pg.test.ts and commit schema.txt",
    ).toBe(committed);
  });
});
