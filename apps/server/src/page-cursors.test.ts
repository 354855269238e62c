import { describe, expect, it } from "vitest";
import { PageCursors } from "./page-cursors.js";

const at = { createdAt: new Date("2026-03-01T12:00:00.123Z"), id: "run_0190" };

describe("PageCursors", () => {
  const cursors = new PageCursors("a secret of at least thirty-two characters");

  it("opens what it signed, for the same scope and secret only", () => {
    const cursor = cursors.sign("run search\0{}", at);
    expect(cursors.open("run search\0{}", cursor)).toEqual(at);
    expect(cursors.open('run search\0{"status":["failed"]}', cursor)).toBeNull();
    expect(
      new PageCursors("another secret, also thirty-two characters").open("run search\0{}", cursor),
    ).toBeNull();
  });

  it("opens no keyset a store could not take, even signed with its own key", () => {
    for (const [createdAt, id] of [
      [new Date("-005000-01-01T00:00:00Z"), "run_1"],
      [new Date("+275000-01-01T00:00:00Z"), "run_1"],
      [at.createdAt, "run_\u0000"],
      [at.createdAt, ""],
      [at.createdAt, "run 1"],
      [at.createdAt, "r".repeat(201)],
    ] as const) {
      expect(
        cursors.open("s", cursors.sign("s", { createdAt, id })),
        `${id} ${createdAt.toISOString()}`,
      ).toBeNull();
    }
  });

  it("opens nothing but its own form", () => {
    const cursor = cursors.sign("s", at);
    for (const bad of ["", ".", "garbage", `${cursor}.x`, cursor.replace(".", ""), `${cursor}A`]) {
      expect(cursors.open("s", bad), bad).toBeNull();
    }
  });
});
