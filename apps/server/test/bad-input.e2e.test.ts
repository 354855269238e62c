/**
 * Bad input end to end: every constraint of the interface's four model input tables, the
 * cross-field rules and the request-level fields, sent as raw HTTP to the real server. Each one
 * must be `400 invalid_request` naming the offending field by its dotted path, must never be a
 * 500, and must neither create a run nor reserve money. The price preview validates the same way.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Tenant, useTestRefvid } from "./harness.js";

type Json = Record<string, unknown>;

/**
 * One bad request: a label, the body to send (a string is sent raw), the field(s) it must name
 * and, where the wording matters, what the message for that field must say.
 */
type Row = [name: string, body: unknown, field: string | string[], message?: RegExp];

const SLUG = {
  a: "lab-a/model-a/reference-to-video",
  b: "lab-b/model-b/reference-to-video",
  c: "lab-c/model-c/reference-to-video",
  d: "lab-d/model-d/reference-to-video",
} as const;
type ModelKey = keyof typeof SLUG;

const IMG = "https://example.com/refs/a.png";
const VID = "https://example.com/refs/a.mp4";
const AUD = "https://example.com/refs/a.mp3";

/** `n` distinct reference URLs. */
function urls(n: number, base: string): string[] {
  return Array.from({ length: n }, (_, i) => `${base}?n=${i}`);
}

/** A valid minimal input per model, so each row breaks exactly one thing. */
const VALID: Record<ModelKey, Json> = {
  a: { prompt: "a cat walks through rain", image_urls: [IMG] },
  b: { prompt: "the character from Image 1 dances", reference_image_urls: [IMG] },
  c: { prompt: "@Image1 on a windy hill", reference_image_urls: [IMG] },
  d: { prompt: "a slow dolly shot", image_urls: [IMG] },
};

/** The valid input of `model` with `changes` applied; a change to `undefined` removes the field. */
function input(model: ModelKey, changes: Json = {}): Json {
  const out: Json = { ...VALID[model] };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Rows for one input field: each bad value must be named as `body.input.<field>`. */
function fieldRows(model: ModelKey, field: string, values: [label: string, value: unknown][]): Row[] {
  return values.map(([label, value]) => [
    `${field} ${label}`,
    { input: input(model, { [field]: value }) },
    `body.input.${field}`,
  ]);
}

/** Prompt rows shared by every model; `max` is the model's prompt length limit. */
function promptRows(model: ModelKey, max: number): Row[] {
  return [
    ["prompt missing", { input: input(model, { prompt: undefined }) }, "body.input.prompt"],
    ...fieldRows(model, "prompt", [
      ["empty", ""],
      [`over ${max} characters`, "x".repeat(max + 1)],
      ["a number", 42],
      ["null", null],
      ["an array", ["a cat"]],
    ]),
  ];
}

/** Reference items that are not http(s) URLs, placed at `index` of `field`. */
function badUrlRows(model: ModelKey, field: string, good: string[], index = 0): Row[] {
  const bad: [string, string][] = [
    ["file URL", "file:///etc/passwd"],
    ["ftp URL", "ftp://example.com/a.png"],
    ["javascript URL", "javascript:alert(1)"],
    ["not a URL", "not a url"],
    ["over 2048 characters", `https://example.com/${"a".repeat(2048)}`],
  ];
  return bad.map(([label, value]) => {
    const list = [...good];
    list.splice(index, 0, value);
    return [
      `${field}[${index}] ${label}`,
      { input: input(model, { [field]: list }) },
      `body.input.${field}[${index}]`,
    ];
  });
}

/** Request-level fields, the same for every model. */
function requestRows(model: ModelKey): Row[] {
  const ok = input(model);
  const seventeen = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
  return [
    ["webhook_url not a URL", { input: ok, webhook_url: "not a url" }, "body.webhook_url"],
    ["webhook_url ftp", { input: ok, webhook_url: "ftp://example.com/hook" }, "body.webhook_url"],
    ["webhook_url a number", { input: ok, webhook_url: 42 }, "body.webhook_url"],
    ["sync a string", { input: ok, sync: "true" }, "body.sync"],
    ["sync a number", { input: ok, sync: 1 }, "body.sync"],
    ["metadata with 17 keys", { input: ok, metadata: seventeen }, "body.metadata"],
    ["metadata with a number value", { input: ok, metadata: { order: 42 } }, "body.metadata.order"],
    [
      "metadata with a 501-character value",
      { input: ok, metadata: { order: "x".repeat(501) } },
      "body.metadata.order",
    ],
    ["metadata not an object", { input: ok, metadata: "order=1" }, "body.metadata"],
    ["metadata with a 41-character key", { input: ok, metadata: { ["k".repeat(41)]: "v" } }, "body.metadata"],
    ["metadata with an empty key", { input: ok, metadata: { "": "v" } }, "body.metadata"],
    [
      "webhook_url with credentials",
      { input: ok, webhook_url: "https://u:p@example.com/hook" },
      "body.webhook_url",
    ],
    ["body null", "null", "body"],
    ["unknown top-level field", { input: ok, callback: "https://example.com/hook" }, "body.callback"],
    ["input missing", { webhook_url: "https://example.com/hook" }, "body.input"],
    ["input not an object", { input: "a cat" }, "body.input"],
    ["input null", { input: null }, "body.input"],
    ["body an empty object", {}, "body.input"],
    ["body not JSON", "{not json", "body"],
    ["body an array", [{ input: ok }], "body"],
    ["body a JSON string", JSON.stringify("hello"), "body"],
  ];
}

/** For models whose image field is `image_urls`: a message naming `reference_image_urls` misleads. */
const NOT_REFERENCE_IMAGE_URLS = /^(?![\s\S]*reference_image_urls)/;

const ROWS: Record<ModelKey, Row[]> = {
  a: [
    ...promptRows("a", 2000),
    ...fieldRows("a", "duration", [
      ['"3"', "3"],
      ['"31"', "31"],
      ['"auto " (trailing space)', "auto "],
      ["the number 10", 10],
      ['"10s"', "10s"],
    ]),
    ...fieldRows("a", "resolution", [
      ['"4k"', "4k"],
      ['"720P"', "720P"],
    ]),
    ...fieldRows("a", "aspect_ratio", [
      ['"2:1"', "2:1"],
      ['"adaptive" (model-b value)', "adaptive"],
    ]),
    ...fieldRows("a", "bitrate_mode", [['"ultra"', "ultra"]]),
    ...fieldRows("a", "generate_audio", [
      ['"true"', "true"],
      ['"false"', "false"],
    ]),
    ...fieldRows("a", "end_user_id", [
      ["a number", 42],
      ["empty", ""],
      ["over 256 characters", "u".repeat(257)],
    ]),
    ...fieldRows("a", "image_urls", [
      ["31 items", urls(31, IMG)],
      ["a string", IMG],
    ]),
    ["video_urls 11 items", { input: input("a", { video_urls: urls(11, VID) }) }, "body.input.video_urls"],
    ["audio_urls 11 items", { input: input("a", { audio_urls: urls(11, AUD) }) }, "body.input.audio_urls"],
    ...badUrlRows("a", "image_urls", [IMG]),
    ...badUrlRows("a", "video_urls", [VID], 1),
    ...badUrlRows("a", "audio_urls", [AUD], 1),
    ...fieldRows("a", "negative_prompt", [["(unknown field)", "blurry"]]),
    ...fieldRows("a", "seed", [["(model-b field)", 1]]),
    // model-a's field is image_urls: the hint must not send the user to model-c's field.
    [
      "image_url (model-c sample field)",
      { input: input("a", { image_url: IMG }) },
      "body.input.image_url",
      NOT_REFERENCE_IMAGE_URLS,
    ],
    [
      "several problems at once",
      { input: input("a", { prompt: "", duration: 10, image_urls: ["ftp://example.com/a.png"], foo: 1 }) },
      ["body.input.prompt", "body.input.duration", "body.input.image_urls[0]", "body.input.foo"],
    ],
    // 51 references: per-field caps (30 + 10 + 10) make the total of 50 unreachable on its own,
    // so the excess is named on the field that is over its own cap.
    [
      "51 references in total",
      {
        input: input("a", {
          image_urls: urls(31, IMG),
          video_urls: urls(10, VID),
          audio_urls: urls(10, AUD),
        }),
      },
      "body.input.image_urls",
    ],
    [
      "audio as the only reference",
      { input: input("a", { image_urls: undefined, audio_urls: [AUD] }) },
      "body.input.audio_urls",
    ],
    [
      "@Image3 with 2 images",
      { input: input("a", { prompt: "@Image1 meets @Image3", image_urls: urls(2, IMG) }) },
      "body.input.prompt",
    ],
    [
      "@Video1 with no videos",
      { input: input("a", { prompt: "@Image1 moves like @Video1" }) },
      "body.input.prompt",
    ],
    [
      "@Audio2 with 1 audio track",
      { input: input("a", { prompt: "@Image1 sings @Audio2", audio_urls: [AUD] }) },
      "body.input.prompt",
    ],
    ["@Image0", { input: input("a", { prompt: "@Image0 waves" }) }, "body.input.prompt"],
    ...requestRows("a"),
  ],
  b: [
    ...promptRows("b", 2000),
    ...fieldRows("b", "duration", [
      ["4", 4],
      ["16", 16],
      ["5.5", 5.5],
      ['"5"', "5"],
    ]),
    ...fieldRows("b", "seed", [
      ["-1", -1],
      ["2147483648", 2147483648],
      ["1.5", 1.5],
      ['"42"', "42"],
    ]),
    ...fieldRows("b", "resolution", [
      ['"768p" (lowercase)', "768p"],
      ['"480p" (lowercase)', "480p"],
      ['"1080P"', "1080P"],
    ]),
    ...fieldRows("b", "aspect_ratio", [
      ['"auto" (model-a value)', "auto"],
      ['"2:1"', "2:1"],
    ]),
    ...fieldRows("b", "prompt_expansion_mode", [['"fast"', "fast"]]),
    ...fieldRows("b", "enable_safety_checker", [
      ['"false"', "false"],
      ["0", 0],
    ]),
    ...fieldRows("b", "reference_image_urls", [["13 items", urls(13, IMG)]]),
    ...fieldRows("b", "reference_video_urls", [["13 items", urls(13, VID)]]),
    ...fieldRows("b", "reference_audio_urls", [["13 items", urls(13, AUD)]]),
    ...badUrlRows("b", "reference_image_urls", [IMG]),
    ...badUrlRows("b", "reference_video_urls", [VID], 1),
    ...badUrlRows("b", "reference_audio_urls", [AUD], 1),
    ...fieldRows("b", "image_urls", [["(model-a field)", [IMG]]]),
    ...fieldRows("b", "generate_audio", [["(unknown field)", true]]),
    [
      "several problems at once",
      {
        input: input("b", {
          prompt: "",
          duration: 4,
          seed: -1,
          reference_image_urls: ["ftp://example.com/a.png"],
        }),
      },
      ["body.input.prompt", "body.input.duration", "body.input.seed", "body.input.reference_image_urls[0]"],
    ],
    [
      "13 references in total",
      { input: input("b", { reference_image_urls: urls(6, IMG), reference_video_urls: urls(7, VID) }) },
      "body.input",
    ],
    [
      "13 references in total across three kinds",
      {
        input: input("b", {
          reference_image_urls: urls(5, IMG),
          reference_video_urls: urls(4, VID),
          reference_audio_urls: urls(4, AUD),
        }),
      },
      "body.input",
    ],
    [
      "audio as the only reference",
      { input: input("b", { reference_image_urls: undefined, reference_audio_urls: [AUD] }) },
      "body.input.reference_audio_urls",
    ],
    ...requestRows("b"),
  ],
  c: [
    ...promptRows("c", 4000),
    ...fieldRows("c", "duration", [
      ["0", 0],
      ["16", 16],
      ["2.5", 2.5],
      ['"6"', "6"],
    ]),
    ...fieldRows("c", "resolution", [
      ['"1080p"', "1080p"],
      ['"720P"', "720P"],
    ]),
    ...fieldRows("c", "aspect_ratio", [
      ['"4:3"', "4:3"],
      ['"auto"', "auto"],
    ]),
    ...fieldRows("c", "reference_image_urls", [
      ["8 items", urls(8, IMG)],
      ["0 items", []],
      ["a string", IMG],
    ]),
    [
      "reference_image_urls missing",
      { input: input("c", { reference_image_urls: undefined }) },
      "body.input.reference_image_urls",
    ],
    ...badUrlRows("c", "reference_image_urls", [IMG], 1),
    [
      "image_url instead of reference_image_urls",
      { input: input("c", { image_url: IMG }) },
      "body.input.image_url",
      /send reference_image_urls/,
    ],
    [
      "image_url alone (the sample request's shape)",
      { input: input("c", { reference_image_urls: undefined, image_url: IMG }) },
      ["body.input.image_url", "body.input.reference_image_urls"],
      /send reference_image_urls/,
    ],
    [
      "several problems at once",
      { input: input("c", { prompt: "", duration: 0, reference_image_urls: [], resolution: "1080p" }) },
      [
        "body.input.prompt",
        "body.input.duration",
        "body.input.reference_image_urls",
        "body.input.resolution",
      ],
    ],
    ...fieldRows("c", "generate_audio", [["(unknown field)", true]]),
    [
      "@Image3 with 2 images",
      { input: input("c", { prompt: "@Image1 and @Image3", reference_image_urls: urls(2, IMG) }) },
      "body.input.prompt",
    ],
    [
      "@Video1 (model-c takes images only)",
      { input: input("c", { prompt: "@Image1 like @Video1" }) },
      "body.input.prompt",
    ],
    ...requestRows("c"),
  ],
  d: [
    ...promptRows("d", 8000),
    ...fieldRows("d", "duration", [
      ['"5s"', "5s"],
      ['"8"', "8"],
      ["8", 8],
    ]),
    ...fieldRows("d", "resolution", [
      ['"480p"', "480p"],
      ['"1080P"', "1080P"],
    ]),
    ...fieldRows("d", "aspect_ratio", [
      ['"4:3"', "4:3"],
      ['"auto"', "auto"],
    ]),
    ...fieldRows("d", "generate_audio", [
      ['"true"', "true"],
      ["1", 1],
    ]),
    ...fieldRows("d", "image_urls", [
      ["5 items", urls(5, IMG)],
      ["0 items", []],
      ["a string", IMG],
    ]),
    ["image_urls missing", { input: input("d", { image_urls: undefined }) }, "body.input.image_urls"],
    ...badUrlRows("d", "image_urls", [IMG], 1),
    ...fieldRows("d", "seed", [["(unknown field)", 1]]),
    // model-d's field is image_urls: the hint must not send the user to model-c's field.
    [
      "image_url (unknown field)",
      { input: input("d", { image_url: IMG }) },
      "body.input.image_url",
      NOT_REFERENCE_IMAGE_URLS,
    ],
    [
      "several problems at once",
      { input: input("d", { prompt: "", duration: "5s", image_urls: [], foo: 1 }) },
      ["body.input.prompt", "body.input.duration", "body.input.image_urls", "body.input.foo"],
    ],
    ...requestRows("d"),
  ],
};

/** One row per constraint kind per model, for the price preview. */
const PREVIEW_ROWS: Record<ModelKey, [name: string, input: Json, field: string | string[]][]> = {
  a: [
    ["prompt missing", input("a", { prompt: undefined }), "body.input.prompt"],
    ["prompt over 2000 characters", input("a", { prompt: "x".repeat(2001) }), "body.input.prompt"],
    ["duration the number 10", input("a", { duration: 10 }), "body.input.duration"],
    ['duration "31"', input("a", { duration: "31" }), "body.input.duration"],
    ['resolution "4k"', input("a", { resolution: "4k" }), "body.input.resolution"],
    ['bitrate_mode "ultra"', input("a", { bitrate_mode: "ultra" }), "body.input.bitrate_mode"],
    ['generate_audio "true"', input("a", { generate_audio: "true" }), "body.input.generate_audio"],
    ["image_urls 31 items", input("a", { image_urls: urls(31, IMG) }), "body.input.image_urls"],
    [
      "image_urls[0] file URL",
      input("a", { image_urls: ["file:///etc/passwd"] }),
      "body.input.image_urls[0]",
    ],
    ["unknown field", input("a", { negative_prompt: "blurry" }), "body.input.negative_prompt"],
    [
      "audio as the only reference",
      input("a", { image_urls: undefined, audio_urls: [AUD] }),
      "body.input.audio_urls",
    ],
    [
      "@Image3 with 2 images",
      input("a", { prompt: "@Image3", image_urls: urls(2, IMG) }),
      "body.input.prompt",
    ],
    [
      "several problems at once",
      input("a", { prompt: "", duration: 10, image_urls: ["ftp://example.com/a.png"], foo: 1 }),
      ["body.input.prompt", "body.input.duration", "body.input.image_urls[0]", "body.input.foo"],
    ],
  ],
  b: [
    ["prompt empty", input("b", { prompt: "" }), "body.input.prompt"],
    ["duration 16", input("b", { duration: 16 }), "body.input.duration"],
    ['duration "5"', input("b", { duration: "5" }), "body.input.duration"],
    ["seed -1", input("b", { seed: -1 }), "body.input.seed"],
    ['resolution "768p"', input("b", { resolution: "768p" }), "body.input.resolution"],
    [
      'prompt_expansion_mode "fast"',
      input("b", { prompt_expansion_mode: "fast" }),
      "body.input.prompt_expansion_mode",
    ],
    [
      'enable_safety_checker "false"',
      input("b", { enable_safety_checker: "false" }),
      "body.input.enable_safety_checker",
    ],
    [
      "reference_video_urls 13 items",
      input("b", { reference_video_urls: urls(13, VID) }),
      "body.input.reference_video_urls",
    ],
    [
      "reference_audio_urls[0] ftp URL",
      input("b", { reference_audio_urls: ["ftp://example.com/a.mp3"] }),
      "body.input.reference_audio_urls[0]",
    ],
    ["unknown field", input("b", { image_urls: [IMG] }), "body.input.image_urls"],
    [
      "13 references in total",
      input("b", { reference_image_urls: urls(6, IMG), reference_video_urls: urls(7, VID) }),
      "body.input",
    ],
    [
      "audio as the only reference",
      input("b", { reference_image_urls: undefined, reference_audio_urls: [AUD] }),
      "body.input.reference_audio_urls",
    ],
    [
      "several problems at once",
      input("b", { prompt: "", duration: 4, seed: -1, reference_image_urls: ["ftp://example.com/a.png"] }),
      ["body.input.prompt", "body.input.duration", "body.input.seed", "body.input.reference_image_urls[0]"],
    ],
  ],
  c: [
    ["prompt over 4000 characters", input("c", { prompt: "x".repeat(4001) }), "body.input.prompt"],
    ["prompt a number", input("c", { prompt: 42 }), "body.input.prompt"],
    ["duration 0", input("c", { duration: 0 }), "body.input.duration"],
    ['aspect_ratio "4:3"', input("c", { aspect_ratio: "4:3" }), "body.input.aspect_ratio"],
    [
      "reference_image_urls 8 items",
      input("c", { reference_image_urls: urls(8, IMG) }),
      "body.input.reference_image_urls",
    ],
    [
      "reference_image_urls 0 items",
      input("c", { reference_image_urls: [] }),
      "body.input.reference_image_urls",
    ],
    [
      "reference_image_urls missing",
      input("c", { reference_image_urls: undefined }),
      "body.input.reference_image_urls",
    ],
    [
      "reference_image_urls[0] javascript URL",
      input("c", { reference_image_urls: ["javascript:alert(1)"] }),
      "body.input.reference_image_urls[0]",
    ],
    ["image_url", input("c", { image_url: IMG }), "body.input.image_url"],
    [
      "@Image3 with 2 images",
      input("c", { prompt: "@Image3", reference_image_urls: urls(2, IMG) }),
      "body.input.prompt",
    ],
    [
      "several problems at once",
      input("c", { prompt: "", duration: 0, reference_image_urls: [], resolution: "1080p" }),
      [
        "body.input.prompt",
        "body.input.duration",
        "body.input.reference_image_urls",
        "body.input.resolution",
      ],
    ],
  ],
  d: [
    ["prompt over 8000 characters", input("d", { prompt: "x".repeat(8001) }), "body.input.prompt"],
    ['duration "5s"', input("d", { duration: "5s" }), "body.input.duration"],
    ['resolution "480p"', input("d", { resolution: "480p" }), "body.input.resolution"],
    ['generate_audio "true"', input("d", { generate_audio: "true" }), "body.input.generate_audio"],
    ["image_urls 5 items", input("d", { image_urls: urls(5, IMG) }), "body.input.image_urls"],
    ["image_urls 0 items", input("d", { image_urls: [] }), "body.input.image_urls"],
    ["image_urls missing", input("d", { image_urls: undefined }), "body.input.image_urls"],
    ["image_urls[0] not a URL", input("d", { image_urls: ["not a url"] }), "body.input.image_urls[0]"],
    ["unknown field", input("d", { seed: 1 }), "body.input.seed"],
    [
      "several problems at once",
      input("d", { prompt: "", duration: "5s", image_urls: [], foo: 1 }),
      ["body.input.prompt", "body.input.duration", "body.input.image_urls", "body.input.foo"],
    ],
  ],
};

const t = useTestRefvid();

/** Asserts the one shape every bad request gets, naming every one of `field`. */
function expectInvalid(res: { status: number; body: unknown }, field: string | string[], message?: RegExp) {
  // The whole response on failure, so a 500 or a wrong shape is plain in the report.
  expect({ status: res.status, body: res.body }).toMatchObject({
    status: 400,
    body: { error: { type: "invalid_request", code: 400 } },
  });
  const fields = (res.body as { error: { fields?: { field: string; message: string }[] } }).error.fields;
  expect(Array.isArray(fields) && fields.length > 0).toBe(true);
  const named = fields?.map((f) => f.field);
  expect(named).toEqual(expect.arrayContaining(Array.isArray(field) ? field : [field]));
  for (const f of fields ?? []) expect(f.message).toMatch(/\S/);
  if (message) {
    const first = Array.isArray(field) ? field[0] : field;
    const messages = (fields ?? []).filter((f) => f.field === first).map((f) => f.message);
    expect(
      messages.some((m) => message.test(m)),
      `messages for ${first}: ${JSON.stringify(messages)}`,
    ).toBe(true);
  }
}

/** Nothing admitted: no reservation, nothing in flight, no run at all. */
async function expectNothingAdmitted(tenant: Tenant) {
  const account = await tenant.call("GET", "/v1/account");
  expect(account.status).toBe(200);
  expect(account.body.wallet.reserved_usd).toBe("0.00");
  expect(account.body.concurrency.in_flight).toBe(0);
  const search = await tenant.call("POST", "/v1/runs/search", {});
  expect(search.status).toBe(201);
  expect(search.body.data).toEqual([]);
}

for (const model of ["a", "b", "c", "d"] as const) {
  describe(`model-${model}: bad submits are 400 invalid_request naming the field`, () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await t.tenant({ rateLimitPerMinute: 100000 });
    });

    it.each(ROWS[model])("%s", async (_name, body, field, message) => {
      const res = await tenant.call("POST", `/v1/run/${SLUG[model]}`, body);
      expectInvalid(res, field, message);
    });

    it("admitted nothing and reserved nothing", async () => {
      await expectNothingAdmitted(tenant);
    });
  });

  describe(`model-${model}: price preview rejects the same input`, () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await t.tenant({ rateLimitPerMinute: 100000 });
    });

    it.each(PREVIEW_ROWS[model])("%s", async (_name, bad, field) => {
      const res = await tenant.call("POST", "/v1/pricing/preview", { endpoint: SLUG[model], input: bad });
      expectInvalid(res, field);
    });

    it("accepts the valid input the rows start from", async () => {
      const res = await tenant.call("POST", "/v1/pricing/preview", {
        endpoint: SLUG[model],
        input: input(model),
      });
      expect({ status: res.status, body: res.body }).toMatchObject({
        status: 201,
        body: { endpoint: SLUG[model] },
      });
    });

    it("created no run", async () => {
      await expectNothingAdmitted(tenant);
    });
  });
}

describe("price preview: request-level problems", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await t.tenant({ rateLimitPerMinute: 100000 });
  });

  it.each<Row>([
    ["unknown endpoint", { endpoint: "lab-x/model-x/reference-to-video", input: VALID.d }, "body.endpoint"],
    ["endpoint missing", { input: VALID.d }, "body.endpoint"],
    ["endpoint a number", { endpoint: 42, input: VALID.d }, "body.endpoint"],
    ["input missing", { endpoint: SLUG.d }, "body.input"],
    ["input not an object", { endpoint: SLUG.d, input: "a cat" }, "body.input"],
    [
      "input of another model",
      { endpoint: SLUG.d, input: VALID.c },
      ["body.input.image_urls", "body.input.reference_image_urls"],
    ],
    ["unknown top-level field", { endpoint: SLUG.d, input: VALID.d, sync: true }, "body.sync"],
    ["body not JSON", "{not json", "body"],
    ["body an array", [{ endpoint: SLUG.d, input: VALID.d }], "body"],
  ])("%s", async (_name, body, field) => {
    const res = await tenant.call("POST", "/v1/pricing/preview", body);
    expectInvalid(res, field);
  });

  it("created no run", async () => {
    await expectNothingAdmitted(tenant);
  });
});
