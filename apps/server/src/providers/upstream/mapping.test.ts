import { describe, expect, it } from "vitest";
import { compileExpression, MappingError } from "./mapping.js";

const where = "catalog.yaml: models.m.routes[0].map";

/** Kling O1's elements from our input: each element names our images by number (@Image1 is 1). */
const KLING_ELEMENTS = `{
  "prompt": prompt,
  "elements": [elements.(
    $element := $;
    {
      "frontal_image_url": $$.image_urls[$element.frontal - 1],
      "reference_image_urls": [$element.references.($i := $; $$.image_urls[$i - 1])]
    }
  )]
}`;

describe("compileExpression: the translations real vendor models need", () => {
  const cases: [string, { map: string; given: unknown; want: unknown }][] = [
    [
      "renames a field and keeps the others",
      {
        map: `$merge([$sift($, function($v, $k) { $k != "image_urls" }), {"reference_images": image_urls}])`,
        given: { prompt: "a cat", image_urls: ["https://x/a.png"], duration: "5" },
        want: { prompt: "a cat", duration: "5", reference_images: ["https://x/a.png"] },
      },
    ],
    [
      "maps an enum value (auto → adaptive) and passes the others through",
      {
        map: `{"aspect_ratio": $lookup({"auto": "adaptive"}, aspect_ratio) ? $lookup({"auto": "adaptive"}, aspect_ratio) : aspect_ratio}`,
        given: { aspect_ratio: "auto" },
        want: { aspect_ratio: "adaptive" },
      },
    ],
    [
      "leaves an enum value that has no translation",
      {
        map: `{"aspect_ratio": aspect_ratio = "auto" ? "adaptive" : aspect_ratio}`,
        given: { aspect_ratio: "9:16" },
        want: { aspect_ratio: "9:16" },
      },
    ],
    [
      'turns "auto" into -1',
      {
        map: `{"duration": duration = "auto" ? -1 : $number(duration)}`,
        given: { duration: "auto" },
        want: { duration: -1 },
      },
    ],
    [
      'reads a number from a string ("8" → 8)',
      {
        map: `{"duration": duration = "auto" ? -1 : $number(duration)}`,
        given: { duration: "8" },
        want: { duration: 8 },
      },
    ],
    [
      'reads the number a string starts with ("8s" → 8)',
      {
        map: `{"duration": $number($match(duration, /^\\d+/).match)}`,
        given: { duration: "8s" },
        want: { duration: 8 },
      },
    ],
    [
      'writes a number as the vendor\'s string (8 → "8s")',
      {
        map: `{"duration": $string(duration) & "s"}`,
        given: { duration: 8 },
        want: { duration: "8s" },
      },
    ],
    [
      "rewrites prompt citations (@Image1 → [Image1])",
      {
        map: `{"prompt": $replace(prompt, /@(Image|Video|Audio)(\\d+)/, "[$1$2]")}`,
        given: { prompt: "@Image1 dances to @Audio1 like @Video12; mail me@Imagine" },
        want: { prompt: "[Image1] dances to [Audio1] like [Video12]; mail me@Imagine" },
      },
    ],
    [
      "builds Kling elements [{frontal_image_url, reference_image_urls}] from our image_urls",
      {
        map: KLING_ELEMENTS,
        given: {
          prompt: "@Element1 holds @Element2",
          image_urls: ["https://x/1.png", "https://x/2.png", "https://x/3.png", "https://x/4.png"],
          elements: [
            { frontal: 1, references: [2, 3] },
            { frontal: 4, references: [4] },
          ],
        },
        want: {
          prompt: "@Element1 holds @Element2",
          elements: [
            {
              frontal_image_url: "https://x/1.png",
              reference_image_urls: ["https://x/2.png", "https://x/3.png"],
            },
            { frontal_image_url: "https://x/4.png", reference_image_urls: ["https://x/4.png"] },
          ],
        },
      },
    ],
    [
      "keeps a one-item list a list (JSONata would give the item alone without [ ])",
      {
        map: `{"image_urls": [image_urls]}`,
        given: { image_urls: ["https://x/1.png"] },
        want: { image_urls: ["https://x/1.png"] },
      },
    ],
    [
      "drops a field whose value is nothing (an optional field not given)",
      {
        map: `{"prompt": prompt, "seed": seed}`,
        given: { prompt: "p" },
        want: { prompt: "p" },
      },
    ],
    [
      "sends the input as it is with $",
      {
        map: "$",
        given: { prompt: "p", image_urls: ["https://x/1.png"] },
        want: { prompt: "p", image_urls: ["https://x/1.png"] },
      },
    ],
  ];

  it.each(cases)("%s", async (_name, { map, given, want }) => {
    const mapped = await compileExpression(map, where).evaluate(given);
    expect(mapped).toEqual(want);
    expect(JSON.parse(JSON.stringify(mapped))).toStrictEqual(mapped);
  });

  it("answers plain arrays: no JSONata sequence flags, not the input's own array", async () => {
    const input = { image_urls: ["https://x/1.png", "https://x/2.png"] };
    const mapped = (await compileExpression("image_urls", where).evaluate(input)) as string[];
    expect(Object.keys(mapped)).toEqual(["0", "1"]);
    expect(mapped).not.toBe(input.image_urls);
    const built = (await compileExpression("image_urls.{'u': $}", where).evaluate(input)) as unknown[];
    expect(Object.keys(built)).toEqual(["0", "1"]);
    expect(Object.getPrototypeOf(built)).toBe(Array.prototype);
  });

  it("answers undefined when the expression selects nothing", async () => {
    expect(await compileExpression("video.url", where).evaluate({ images: [] })).toBeUndefined();
  });
});

describe("output paths: where the video's URL is", () => {
  const url = "https://v3b.fal.media/files/b/panda/output.mp4";
  const cases: [string, { path: string; given: unknown; want: unknown }][] = [
    ["fal's video.url", { path: "video.url", given: { video: { url, file_size: 1 }, seed: 3 }, want: url }],
    ["a list of videos", { path: "videos[0].url", given: { videos: [{ url }, { url: "x" }] }, want: url }],
    ["the first of a list", { path: "$[0]", given: [url, "https://x/2.mp4"], want: url }],
    ["$[0] of a bare string", { path: "$[0]", given: url, want: url }],
    ["a bare string", { path: "$", given: url, want: url }],
  ];

  it.each(cases)("%s", async (_name, { path, given, want }) => {
    expect(await compileExpression(path, "output").evaluate(given)).toEqual(want);
  });
});

describe("mapping errors name where the expression is written", () => {
  it.each([
    ['{"a": }', 'The symbol "}" cannot be used as a unary operator (at character 7)'],
    ["$replace(prompt", 'Expected ")" before end of expression (at character 15)'],
    ['"unterminated', "String literal must be terminated by a matching quote (at character 13)"],
  ])("a syntax error in %s", (source, message) => {
    const compile = () => compileExpression(source, where);
    expect(compile).toThrow(MappingError);
    expect(compile).toThrow(`${where}: ${message}`);
  });

  it("keeps the message of an expression written over lines on one line", () => {
    expect(() => compileExpression("(\n  a +\n", where)).toThrow(
      `${where}: Expected ")" before end of expression (at character 8)`,
    );
  });

  it.each([
    ['$number("abc")', { duration: "x" }, 'Unable to cast value to a number: "abc" (at character 8)'],
    [
      "duration + 1",
      { duration: "8" },
      'The left side of the "+" operator must evaluate to a number (at character 10)',
    ],
    ['$error("no such aspect ratio")', {}, "no such aspect ratio (at character 7)"],
  ])("an evaluation error in %s", async (source, given, message) => {
    const evaluation = compileExpression(source, where).evaluate(given);
    await expect(evaluation).rejects.toThrow(MappingError);
    await expect(compileExpression(source, where).evaluate(given)).rejects.toThrow(`${where}: ${message}`);
  });

  it("refuses a function as a value", async () => {
    await expect(compileExpression('{"f": $string}', where).evaluate({})).rejects.toThrow(
      `${where}: gives a function at f, not a JSON value`,
    );
  });

  it("stops an expression that recurses without end", async () => {
    const source = "($f := function($n) { 1 + $f($n + 1) }; $f(0))";
    await expect(compileExpression(source, where).evaluate({})).rejects.toThrow(MappingError);
  });
});
