/** The embedded PGlite driver of Database. */
import type { PGlite } from "@electric-sql/pglite";
import { type Database, rowsOf } from "./database.js";

/** A Database on `db`, an open PGlite. */
export function pgliteDatabase(db: PGlite): Database {
  return {
    query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await db.query(text, params)),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({ query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await tx.query(text, params)) }),
      ),
    listen: async (channel, fn) => {
      const unsubscribe = await db.listen(channel, fn);
      return async () => unsubscribe();
    },
    close: () => db.close(),
  };
}
