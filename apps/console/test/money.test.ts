/** Money as the console shows and adds it: a top-up's effect is shown before it is applied. */
import { describe, expect, it } from "vitest";
import { addUsd, amountOf, sumUsd, usd } from "../src/money.js";

describe("usd", () => {
  it.each([
    ["a spend", "0.284", "$0.284"],
    ["nothing", "0.00", "$0.00"],
    ["a loss, its sign first", "-0.016", "-$0.016"],
    ["thousands, grouped", "1000025.00", "$1,000,025.00"],
    ["a large loss", "-1234.5", "-$1,234.5"],
    ["a whole amount", "1000", "$1,000"],
  ])("shows %s", (_name, amount, want) => {
    expect(usd(amount)).toBe(want);
  });
});

describe("addUsd", () => {
  it.each([
    ["a balance and a top-up", "25.00", "1000000", "1000025.00"],
    ["fractions of a cent", "49.716", "0.284", "50.00"],
    ["to nothing", "0.00", "25.5", "25.50"],
    ["not an amount", "25.00", "ten", undefined],
  ])("adds %s", (_name, a, b, want) => {
    expect(addUsd(a, b)).toBe(want);
  });
});

describe("sumUsd", () => {
  it.each([
    ["no runs", [], "0.00"],
    ["three runs", ["0.284", "0.284", "0.568"], "1.136"],
    ["free runs among them", ["0.00", "0.071"], "0.071"],
  ])("adds %s", (_name, amounts, want) => {
    expect(sumUsd(amounts)).toBe(want);
  });
});

describe("amountOf", () => {
  it.each([
    ["a whole amount", "25", "25.00"],
    ["with spaces", " 25.5 ", "25.50"],
    ["micro-dollars", "0.000001", "0.000001"],
    ["nothing", "0", undefined],
    ["a negative amount", "-5", undefined],
    ["too many decimals", "1.0000001", undefined],
    ["words", "ten", undefined],
  ])("reads %s", (_name, text, want) => {
    expect(amountOf(text)).toBe(want);
  });
});
