/**
 * The tables of the Reference-to-Video Run Service interface, the contract refvid implements,
 * transcribed as data: every model input field, the Run, Output and Account objects, the statuses
 * and the paths.
 * `checkInterface` walks them against a bundled OpenAPI document and lists every mismatch.
 */

type JsonType = "string" | "integer" | "number" | "boolean" | "array" | "object" | "null";

export interface FieldRule {
  type: JsonType;
  required?: boolean;
  nullable?: boolean;
  enum?: readonly (string | number)[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  /** For arrays: the format of each item (`uri` for reference URLs). */
  itemFormat?: string;
}

const urls = (maxItems: number, minItems?: number): FieldRule => ({
  type: "array",
  maxItems,
  ...(minItems === undefined ? {} : { minItems, required: true }),
  itemFormat: "uri",
});
const seconds = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
const ratios = ["21:9", "16:9", "4:3", "1:1", "3:4", "9:16"];

/** Model inputs, field by field, as the interface's "Input of model-x" tables give them. */
export const MODEL_INPUTS: Record<
  string,
  { path: string; schema: string; fields: Record<string, FieldRule> }
> = {
  "model-a": {
    path: "/v1/run/lab-a/model-a/reference-to-video",
    schema: "ModelAInput",
    fields: {
      prompt: { type: "string", required: true, maxLength: 2000 },
      duration: { type: "string", enum: ["auto", ...seconds(4, 30)], default: "auto" },
      audio_urls: urls(10),
      image_urls: urls(30),
      video_urls: urls(10),
      resolution: { type: "string", enum: ["480p", "720p", "1080p"], default: "720p" },
      aspect_ratio: { type: "string", enum: ["auto", ...ratios], default: "auto" },
      bitrate_mode: { type: "string", enum: ["standard", "high"], default: "standard" },
      generate_audio: { type: "boolean", default: true },
      end_user_id: { type: "string" },
    },
  },
  "model-b": {
    path: "/v1/run/lab-b/model-b/reference-to-video",
    schema: "ModelBInput",
    fields: {
      prompt: { type: "string", required: true },
      seed: { type: "integer" },
      duration: { type: "integer", minimum: 5, maximum: 15, default: 5 },
      resolution: { type: "string", enum: ["480P", "768P"], default: "768P" },
      aspect_ratio: { type: "string", enum: ["adaptive", ...ratios], default: "adaptive" },
      reference_image_urls: urls(12),
      reference_video_urls: urls(12),
      reference_audio_urls: urls(12),
      enable_safety_checker: { type: "boolean", default: true },
      prompt_expansion_mode: { type: "string", enum: ["balanced", "quality"], default: "balanced" },
    },
  },
  "model-c": {
    path: "/v1/run/lab-c/model-c/reference-to-video",
    schema: "ModelCInput",
    fields: {
      prompt: { type: "string", required: true, maxLength: 4000 },
      duration: { type: "integer", minimum: 1, maximum: 15, default: 6 },
      resolution: { type: "string", enum: ["480p", "720p"], default: "720p" },
      aspect_ratio: { type: "string", enum: ["16:9", "9:16", "1:1"], default: "16:9" },
      reference_image_urls: urls(7, 1),
    },
  },
  "model-d": {
    path: "/v1/run/lab-d/model-d/reference-to-video",
    schema: "ModelDInput",
    fields: {
      prompt: { type: "string", required: true, maxLength: 8000 },
      duration: { type: "string", enum: ["4s", "6s", "8s"], default: "8s" },
      image_urls: urls(4, 1),
      resolution: { type: "string", enum: ["720p", "1080p"], default: "720p" },
      aspect_ratio: { type: "string", enum: ["16:9", "9:16", "1:1"], default: "16:9" },
      generate_audio: { type: "boolean", default: true },
    },
  },
};

export const RUN_STATUSES = ["queued", "processing", "succeeded", "failed", "timeout", "cancelled"];

/** The Run object table; `required` is the interface's "Required: yes". */
export const RUN_FIELDS: Record<string, FieldRule> = {
  run_id: { type: "string", required: true },
  endpoint: { type: "string", required: true },
  model: { type: "string", required: true },
  capability: { type: "string", required: true },
  mode: { type: "string", required: true },
  status: { type: "string", required: true, enum: RUN_STATUSES },
  output: { type: "object", nullable: true },
  error: { type: "object", nullable: true },
  billing: { type: "object", nullable: true },
  created_at: { type: "string", required: true, format: "date-time" },
  started_at: { type: "string", nullable: true, format: "date-time" },
  completed_at: { type: "string", nullable: true, format: "date-time" },
  elapsed_ms: { type: "number", nullable: true },
};

/** Nested objects, by dotted path from a component schema. */
export const NESTED_FIELDS: Record<string, Record<string, FieldRule>> = {
  "Run.error": {
    type: { type: "string", required: true },
    code: { type: "number", required: true },
    message: { type: "string", required: true },
  },
  "Run.billing": {
    amount: { type: "string", required: true },
    currency: { type: "string", required: true, enum: ["usd"] },
  },
  "Run.output": { videos: { type: "array", required: true } },
  "Run.output.videos[]": {
    url: { type: "string", required: true, format: "uri" },
    file_name: { type: "string" },
    content_type: { type: "string" },
  },
  Account: {
    organization_id: { type: "string", required: true },
    api_key_id: { type: "string", required: true },
    environment: { type: "string", required: true, enum: ["live", "test"] },
    identity: { type: "object", required: true },
    wallet: { type: "object", required: true },
    concurrency: { type: "object", required: true },
    rate_limit: { type: "object", required: true },
    api_key_concurrency: { type: "object", required: true },
  },
  "Account.wallet": {
    balance_usd: { type: "string", required: true },
    reserved_usd: { type: "string", required: true },
    available_usd: { type: "string", required: true },
    total_spent_usd: { type: "string", required: true },
    currency: { type: "string", required: true },
  },
  "Account.concurrency": {
    tier: { type: "string", required: true, enum: ["starter", "growth", "pro", "scale"] },
    limit: { type: "integer", required: true },
    in_flight: { type: "integer", required: true },
    available: { type: "integer", required: true },
  },
  "Account.rate_limit": { per_minute: { type: "integer", required: true } },
  "ConcurrencyLimitError.error": {
    code: { type: "string", required: true, enum: ["concurrency_limit_exceeded"] },
    message: { type: "string", required: true },
    scope: { type: "string", required: true, enum: ["organization", "api_key"] },
    limit: { type: "integer", required: true },
    in_flight: { type: "integer", required: true },
  },
  RateLimitError: {
    error: { type: "string", required: true, enum: ["rate_limit_exceeded"] },
    message: { type: "string", required: true },
  },
};

/** Request body fields shared by every submit. */
export const SUBMIT_FIELDS: Record<string, FieldRule> = {
  input: { type: "object", required: true },
  webhook_url: { type: "string", format: "uri" },
  sync: { type: "boolean", default: false },
};

/** Operations of the interface: method, path, success status. */
export const OPERATIONS: readonly [string, string, string][] = [
  ...Object.values(MODEL_INPUTS).map(({ path }) => ["post", path, "201"] as [string, string, string]),
  ["get", "/v1/runs/{run_id}", "200"],
  ["get", "/v1/account", "200"],
  ["post", "/v1/pricing/preview", "201"],
  ["post", "/v1/runs/search", "201"],
];

type Schema = Record<string, unknown>;
type Doc = {
  paths: Record<string, Record<string, Schema>>;
  components: Record<string, Record<string, Schema>>;
};

function deref(doc: Doc, node: unknown): Schema {
  let current = node as Schema;
  for (let hops = 0; typeof current?.$ref === "string" && hops < 20; hops++) {
    const parts = (current.$ref as string).replace(/^#\//, "").split("/");
    current = parts.reduce<unknown>(
      (at, key) => (at as Schema)?.[key.replace(/~1/g, "/").replace(/~0/g, "~")],
      doc,
    ) as Schema;
  }
  return current ?? {};
}

/** The non-null variant of a schema written as `oneOf/anyOf: [X, {type: null}]`, and whether null is allowed. */
function unwrapNullable(doc: Doc, schema: Schema): { schema: Schema; types: Set<string> } {
  const s = deref(doc, schema);
  const types = new Set<string>();
  const variants = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (variants) {
    let inner: Schema = {};
    for (const v of variants.map((x) => deref(doc, x))) {
      for (const t of typesOf(v)) types.add(t);
      if (!typesOf(v).has("null")) inner = v;
    }
    return { schema: inner, types };
  }
  if (Array.isArray(s.allOf)) {
    const merged: Schema = { type: "object", properties: {}, required: [] };
    for (const part of (s.allOf as Schema[]).map((x) => deref(doc, x))) {
      Object.assign(merged.properties as Schema, part.properties);
      (merged.required as string[]).push(...((part.required as string[]) ?? []));
    }
    return { schema: merged, types: new Set(["object"]) };
  }
  return { schema: s, types: typesOf(s) };
}

function typesOf(s: Schema): Set<string> {
  const t = s.type;
  const list = Array.isArray(t) ? t : t === undefined ? [] : [t];
  if (s.properties && list.length === 0) list.push("object");
  return new Set(list as string[]);
}

function checkField(
  doc: Doc,
  where: string,
  name: string,
  prop: Schema | undefined,
  required: boolean,
  rule: FieldRule,
): string[] {
  const at = `${where}.${name}`;
  if (!prop) return [`${at}: missing`];
  const problems: string[] = [];
  const { schema, types } = unwrapNullable(doc, prop);
  const typeOk = types.has(rule.type) || (rule.type === "number" && types.has("integer"));
  if (!typeOk) problems.push(`${at}: type ${[...types].join("|") || "(none)"}, want ${rule.type}`);
  if (rule.nullable && !types.has("null")) problems.push(`${at}: must allow null`);
  if (rule.required && !required) problems.push(`${at}: must be required`);
  if (rule.required === undefined && required && where.endsWith("Input"))
    problems.push(`${at}: must be optional`);
  for (const key of [
    "default",
    "minimum",
    "maximum",
    "maxLength",
    "minItems",
    "maxItems",
    "format",
  ] as const) {
    if (rule[key] !== undefined && schema[key] !== rule[key]) {
      problems.push(`${at}: ${key} ${JSON.stringify(schema[key])}, want ${JSON.stringify(rule[key])}`);
    }
  }
  if (rule.enum && JSON.stringify(schema.enum) !== JSON.stringify(rule.enum)) {
    problems.push(`${at}: enum ${JSON.stringify(schema.enum)}, want ${JSON.stringify(rule.enum)}`);
  }
  if (rule.itemFormat) {
    const items = deref(doc, schema.items);
    if (items.format !== rule.itemFormat)
      problems.push(`${at}[]: format ${String(items.format)}, want ${rule.itemFormat}`);
  }
  return problems;
}

function checkObject(
  doc: Doc,
  where: string,
  object: Schema,
  fields: Record<string, FieldRule>,
  exact: boolean,
): string[] {
  const { schema } = unwrapNullable(doc, object);
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[]) ?? []);
  const problems = Object.entries(fields).flatMap(([name, rule]) =>
    checkField(doc, where, name, props[name], required.has(name), rule),
  );
  if (exact) {
    for (const name of Object.keys(props))
      if (!(name in fields)) problems.push(`${where}.${name}: not in the interface`);
    if (schema.additionalProperties !== false) problems.push(`${where}: additionalProperties must be false`);
  }
  return problems;
}

/** Resolves `Run.output.videos[]`-style paths from a component schema. */
function resolvePath(doc: Doc, path: string): Schema {
  const [root, ...rest] = path.split(".");
  let at: Schema = deref(doc, doc.components.schemas?.[root as string]);
  for (const step of rest) {
    const name = step.replace(/\[\]$/, "");
    at = unwrapNullable(doc, (at.properties as Record<string, Schema>)?.[name] ?? {}).schema;
    if (step.endsWith("[]")) at = unwrapNullable(doc, at.items as Schema).schema;
  }
  return at;
}

/** Every way `doc` departs from the interface's tables; empty when it conforms. */
export function checkInterface(doc: Doc): string[] {
  const problems: string[] = [];
  for (const [model, { path, schema, fields }] of Object.entries(MODEL_INPUTS)) {
    const input = doc.components.schemas?.[schema];
    if (!input) {
      problems.push(`${model}: no components.schemas.${schema}`);
      continue;
    }
    problems.push(...checkObject(doc, schema, input, fields, true));
    const body = deref(doc, deref(doc, doc.paths[path]?.post?.requestBody).content as Schema);
    const bodySchema = deref(doc, (body?.["application/json"] as Schema | undefined)?.schema);
    problems.push(...checkObject(doc, `${path} body`, bodySchema, SUBMIT_FIELDS, false));
    const inputRef = (bodySchema.properties as Record<string, Schema>)?.input?.$ref;
    if (inputRef !== `#/components/schemas/${schema}`)
      problems.push(`${path} body.input: must be ${schema}, is ${String(inputRef)}`);
  }
  const run = doc.components.schemas?.Run;
  if (!run) problems.push("no components.schemas.Run");
  else problems.push(...checkObject(doc, "Run", run, RUN_FIELDS, false));
  for (const [path, fields] of Object.entries(NESTED_FIELDS)) {
    problems.push(...checkObject(doc, path, resolvePath(doc, path), fields, false));
  }
  for (const [method, path, status] of OPERATIONS) {
    const op = doc.paths[path]?.[method];
    if (!op) {
      problems.push(`${method.toUpperCase()} ${path}: missing`);
      continue;
    }
    if (!(op.responses as Schema | undefined)?.[status])
      problems.push(`${method.toUpperCase()} ${path}: no ${status} response`);
    if (path.startsWith("/v1/run/")) {
      const created = deref(doc, (op.responses as Schema)[status]);
      if (!(created.headers as Schema | undefined)?.["X-Concurrency-Remaining"]) {
        problems.push(`${method.toUpperCase()} ${path}: 201 lacks X-Concurrency-Remaining`);
      }
    }
  }
  return problems;
}
