/**
 * The operator's routing file (`REFVID_PROVIDERS_FILE`, JSON or YAML): named providers, and per
 * model an ordered list of routes, the later ones fallbacks. Checked once at boot: a bad file stops
 * the process with a message naming the path inside the file. Credentials are never in the file:
 * `token_env` names the environment variable that holds one, and it must be set.
 *
 *   providers:
 *     fal-main:  { type: fal, url: https://queue.fal.run, token_env: FAL_KEY, max_concurrency: 10 }
 *     replicate: { type: replicate, token_env: REPLICATE_API_TOKEN }
 *     gpu-box-1: { type: cog, url: http://10.0.0.5:5000, max_concurrency: 1 }
 *     preview:   { type: preview }
 *   routes:
 *     lab-a/model-a/reference-to-video:
 *       - { provider: fal-main, model: "<fal endpoint id>" }
 *       - { provider: replicate, model: "<owner>/<name>" }
 */
import { readFileSync } from "node:fs";
import { isBuiltInModelSlug, MODEL_SLUGS, type ModelSlug } from "@refvid/core";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

export const UPSTREAM_TYPES = ["fal", "replicate", "cog"] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

const DEFAULT_URLS: Partial<Record<UpstreamType, string>> = {
  fal: "https://queue.fal.run",
  replicate: "https://api.replicate.com",
};

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of an environment variable (letters, digits, _)");
const httpUrl = z
  .string()
  .url("must be a URL")
  .refine((u) => /^https?:\/\//.test(u), "must be an http or https URL");
const cap = z.number().int().positive().max(10_000);

const providerSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("fal"),
    url: httpUrl.optional(),
    token_env: envName,
    max_concurrency: cap.optional(),
  }),
  z.strictObject({
    type: z.literal("replicate"),
    url: httpUrl.optional(),
    token_env: envName,
    max_concurrency: cap.optional(),
  }),
  z.strictObject({
    type: z.literal("cog"),
    url: httpUrl,
    token_env: envName.optional(),
    max_concurrency: cap.optional(),
  }),
  z.strictObject({ type: z.literal("preview"), max_concurrency: cap.optional() }),
  z.strictObject({ type: z.literal("simulated"), max_concurrency: cap.optional() }),
]);

const fieldList = z.array(z.string().min(1)).min(1);
const routeSchema = z.strictObject({
  provider: z.string().min(1),
  model: z.string().min(1).optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  rename: z.record(z.string(), z.string().min(1)).optional(),
  only: fieldList.optional(),
  omit: fieldList.optional(),
  as_number: fieldList.optional(),
});

const fileSchema = z.strictObject({
  providers: z.record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, . _ -"),
    providerSchema,
  ),
  routes: z.record(z.string(), z.array(routeSchema).min(1, "must list at least one route")).default({}),
});

export type ProviderSpec = z.infer<typeof providerSchema> & { url?: string };

export interface ProviderEntry {
  name: string;
  type: ProviderSpec["type"];
  /** The vendor's base URL (its default when the file gives none); absent for built-in providers. */
  url?: string;
  /** The credential, read from `token_env`; never logged. */
  token: string | null;
  tokenEnv?: string;
  maxConcurrency?: number;
}

export interface RouteEntry {
  provider: ProviderEntry;
  model?: string;
  input?: Record<string, unknown>;
  rename?: Record<string, string>;
  only?: string[];
  omit?: string[];
  asNumber?: string[];
}

export interface Routing {
  /** The file the routing was read from, for messages. */
  file: string;
  providers: ProviderEntry[];
  routes: Partial<Record<ModelSlug, RouteEntry[]>>;
}

export class RoutingError extends Error {}

/** Reads and checks the routing file; throws a RoutingError naming the file and the path inside it. */
export function loadRouting(file: string, env: Record<string, string | undefined>): Routing {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new RoutingError(`REFVID_PROVIDERS_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new RoutingError(
      `REFVID_PROVIDERS_FILE: ${file} is not valid ${/\.json$/i.test(file) ? "JSON" : "YAML"}: ${(err as Error).message.split("\n")[0]}`,
    );
  }
  return parseRouting(raw, file, env);
}

export function parseRouting(raw: unknown, file: string, env: Record<string, string | undefined>): Routing {
  const problems: string[] = [];
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${pathOf(issue.path)}: ${messageOf(issue)}`);
    throw routingError(file, problems);
  }
  const providers = new Map<string, ProviderEntry>();
  for (const [name, spec] of Object.entries(parsed.data.providers)) {
    const tokenEnv = "token_env" in spec ? spec.token_env : undefined;
    const token = tokenEnv ? (env[tokenEnv] ?? "") : "";
    if (tokenEnv && token.trim() === "") {
      problems.push(`providers.${name}.token_env: the environment variable ${tokenEnv} is not set`);
    }
    const url = "url" in spec && spec.url ? spec.url : DEFAULT_URLS[spec.type as UpstreamType];
    providers.set(name, {
      name,
      type: spec.type,
      ...(url ? { url } : {}),
      token: tokenEnv ? token.trim() : null,
      ...(tokenEnv ? { tokenEnv } : {}),
      ...(spec.max_concurrency ? { maxConcurrency: spec.max_concurrency } : {}),
    });
  }
  const routes: Routing["routes"] = {};
  const known = [...providers.keys()].join(", ") || "none";
  for (const [slug, list] of Object.entries(parsed.data.routes)) {
    if (!isBuiltInModelSlug(slug)) {
      problems.push(`routes.${slug}: not a model (models: ${MODEL_SLUGS.join(", ")})`);
      continue;
    }
    const entries: RouteEntry[] = [];
    list.forEach((route, i) => {
      const where = `routes.${slug}[${i}]`;
      const provider = providers.get(route.provider);
      if (!provider) {
        problems.push(`${where}.provider: no provider "${route.provider}" (providers: ${known})`);
        return;
      }
      if ((provider.type === "fal" || provider.type === "replicate") && !route.model) {
        problems.push(`${where}.model: required for a ${provider.type} provider (the vendor's model to run)`);
      }
      entries.push({
        provider,
        ...(route.model ? { model: route.model } : {}),
        ...(route.input ? { input: route.input } : {}),
        ...(route.rename ? { rename: route.rename } : {}),
        ...(route.only ? { only: route.only } : {}),
        ...(route.omit ? { omit: route.omit } : {}),
        ...(route.as_number ? { asNumber: route.as_number } : {}),
      });
    });
    routes[slug] = entries;
  }
  if (problems.length > 0) throw routingError(file, problems);
  return { file, providers: [...providers.values()], routes };
}

function routingError(file: string, problems: string[]): RoutingError {
  return new RoutingError(
    `REFVID_PROVIDERS_FILE: ${file} is not valid:\n${problems.map((p) => `  ${p}`).join("\n")}`,
  );
}

function pathOf(path: readonly PropertyKey[]): string {
  return (
    path.reduce<string>(
      (acc, part) =>
        typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part),
      "",
    ) || "(the file)"
  );
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_union" && issue.path.at(-1) !== undefined) {
    return `type must be one of ${[...UPSTREAM_TYPES, "preview", "simulated"].join(", ")}`;
  }
  if (issue.code === "unrecognized_keys")
    return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`;
  return issue.message;
}
