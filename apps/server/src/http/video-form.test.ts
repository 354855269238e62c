import { describe, expect, it } from "vitest";
import { setField } from "./video-form.js";

describe("a videos form's bracketed field names", () => {
  it("nest objects, append to arrays, and start a new element when the last one has the field", () => {
    const fields: Record<string, unknown> = {};
    for (const [name, value] of [
      ["prompt", "p"],
      ["input_reference[image_url]", "https://example.com/a.png"],
      ["input_references[][type]", "image_url"],
      ["input_references[][image_url][url]", "https://example.com/b.png"],
      ["input_references[][type]", "audio_url"],
      ["input_references[][audio_url][url]", "https://example.com/c.mp3"],
      ["tags[]", "one"],
      ["tags[]", "two"],
    ] as const) {
      setField(fields, name, value);
    }
    expect(fields).toEqual({
      prompt: "p",
      input_reference: { image_url: "https://example.com/a.png" },
      input_references: [
        { type: "image_url", image_url: { url: "https://example.com/b.png" } },
        { type: "audio_url", audio_url: { url: "https://example.com/c.mp3" } },
      ],
      tags: ["one", "two"],
    });
  });

  it("keeps a name that is not bracketed as it is", () => {
    const fields: Record<string, unknown> = {};
    setField(fields, "a]b[", "x");
    expect(fields).toEqual({ "a]b[": "x" });
  });

  it("never reaches an object's prototype: such names are left out", () => {
    const fields: Record<string, unknown> = Object.create(null);
    setField(fields, "__proto__[polluted]", "yes");
    setField(fields, "input_reference[constructor][prototype][polluted]", "yes");
    setField(fields, "a[][__proto__]", "yes");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(fields)).toEqual([]);
  });
});
