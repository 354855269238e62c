import { describe, expect, it } from "vitest";
import { namedStatement } from "./named.js";

describe("namedStatement", () => {
  it.each([
    ["numbers names in order of first use", "select :b, :a, :b", "select $1, $2, $1", { a: 1, b: 2 }, [2, 1]],
    [
      "leaves casts alone",
      "select :at::timestamptz, x::text",
      "select $1::timestamptz, x::text",
      { at: "t" },
      ["t"],
    ],
    ["passes null through", "update t set v = :v", "update t set v = $1", { v: null }, [null]],
  ])("%s", (_name, source, text, params, values) => {
    const statement = namedStatement<Record<string, unknown>>(source);
    expect(statement.text).toBe(text);
    expect(statement.values(params)).toEqual(values);
  });

  it("refuses a call that leaves a parameter out", () => {
    expect(() => namedStatement<{ a?: number }>("select :a").values({})).toThrow(/:a is missing/);
  });
});
