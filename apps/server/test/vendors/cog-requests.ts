/**
 * Reading a request to a Cog server: a fronting proxy's refusals (`rateLimitNext`,
 * `serverErrorNext`), the body parsed as coglet (serde) or the python server (pydantic) parses it,
 * and the model's `Input` validated; the sources are in cog-server.ts.
 */
import type { ServerResponse } from "node:http";
import type { CogContext } from "./cog-context.js";
import { type CogRequestKind, type CogWebhookEvent, detail, send, WEBHOOK_EVENTS } from "./cog-protocol.js";
import { cogRefusal } from "./input-refusals.js";

type Problem = ReturnType<typeof detail>;
type Parsed = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; body: unknown };

/** The request readers over `ctx`. */
export function requestReader(ctx: CogContext) {
  const { knobs } = ctx;

  const take = (counter: Partial<Record<CogRequestKind, number>>, kind: CogRequestKind) => {
    const left = counter[kind] ?? 0;
    if (left <= 0) return false;
    counter[kind] = left - 1;
    return true;
  };
  /** Proxy-style refusals shared by every prediction route; true when the request was answered. */
  const refused = (res: ServerResponse, kind: CogRequestKind) => {
    if (take(knobs.serverErrorNext, kind)) {
      send(res, knobs.serverErrorStatus, "Internal Server Error");
      return true;
    }
    if (take(knobs.rateLimitNext, kind)) {
      send(res, 429, { detail: "Too Many Requests" }, { "retry-after": String(knobs.retryAfterSeconds) });
      return true;
    }
    return false;
  };

  const parse = (text: string, bodyRequired: boolean): Parsed => {
    const python = ctx.isPython();
    if (text.trim() === "") {
      if (python && bodyRequired) {
        return { ok: false, status: 422, body: { detail: [detail(["body"], "Field required", "missing")] } };
      }
      return { ok: true, body: {} };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      if (!python) {
        return { ok: false, status: 400, body: `Failed to parse the request body as JSON: ${String(error)}` };
      }
      return {
        ok: false,
        status: 422,
        body: { detail: [detail(["body", 0], "JSON decode error", "json_invalid")] },
      };
    }
    const problems: Problem[] = [];
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      problems.push(detail(["body"], "Input should be a valid dictionary", "dict_type"));
    } else {
      const b = body as Record<string, unknown>;
      if (b.id !== undefined && b.id !== null && typeof b.id !== "string") {
        problems.push(detail(["body", "id"], "Input should be a valid string", "string_type"));
      }
      if (b.webhook !== undefined && b.webhook !== null && typeof b.webhook !== "string") {
        problems.push(detail(["body", "webhook"], "Input should be a valid URL", "url_type"));
      }
      const filter = b.webhook_events_filter;
      if (filter !== undefined && filter !== null) {
        const events = Array.isArray(filter) ? filter : [filter];
        events.forEach((e, i) => {
          if (!WEBHOOK_EVENTS.includes(e as CogWebhookEvent)) {
            problems.push(
              detail(
                ["body", "webhook_events_filter", i],
                "Input should be 'start', 'output', 'logs' or 'completed'",
                "enum",
              ),
            );
          }
        });
      }
    }
    if (problems.length > 0) {
      if (!python) {
        const msg = `Failed to deserialize the JSON body into the target type: ${problems[0]?.loc.join(".")}`;
        return { ok: false, status: 422, body: msg };
      }
      return { ok: false, status: 422, body: { detail: problems } };
    }
    return { ok: true, body: body as Record<string, unknown> };
  };

  /** The model's Input: unknown fields dropped, missing and mistyped ones reported pydantic-style. */
  const validate = (given: unknown): { input: Record<string, unknown>; problems: Problem[] } => {
    const raw = given ?? {};
    if (ctx.checkInput) {
      const problems = cogRefusal(ctx.checkInput(raw));
      return {
        input: typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {},
        problems,
      };
    }
    if (typeof raw !== "object" || Array.isArray(raw)) {
      return {
        input: {},
        problems: [detail(["body", "input"], "Input should be a valid dictionary", "dict_type")],
      };
    }
    const input: Record<string, unknown> = {};
    const problems: Problem[] = [];
    for (const [name, field] of Object.entries(ctx.schema.properties)) {
      const value = (raw as Record<string, unknown>)[name];
      if (value === undefined) continue;
      input[name] = value;
      const ok =
        field.type === "integer"
          ? Number.isInteger(value)
          : field.type === "array"
            ? Array.isArray(value)
            : field.type === "object"
              ? typeof value === "object" && value !== null && !Array.isArray(value)
              : typeof value === field.type;
      if (!ok)
        problems.push(
          detail(
            ["body", "input", name],
            `${JSON.stringify(value)} is not of type "${field.type}"`,
            "value_error",
          ),
        );
      else if (field.enum && !field.enum.includes(value)) {
        problems.push(
          detail(
            ["body", "input", name],
            `${JSON.stringify(value)} is not one of ${JSON.stringify(field.enum)}`,
            "value_error",
          ),
        );
      }
    }
    for (const name of ctx.schema.required) {
      if (input[name] === undefined)
        problems.push(detail(["body", "input", name], "Field required", "value_error.missing"));
    }
    return { input, problems };
  };

  return { refused, parse, validate };
}
