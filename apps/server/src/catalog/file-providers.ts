/**
 * The providers a catalog or routing file names (`providers:`, `docs/catalog.md`): a vendor type
 * with its base URL (fal's and Replicate's own unless the file gives one, a Cog box's always
 * given), the environment variable that holds its credential, and how many runs it takes at once.
 */
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

export const providerSchema = z.discriminatedUnion("type", [
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

/** The providers by name, each credential read from `env`; a problem for each one not set. */
export function readProviders(
  specs: Record<string, z.output<typeof providerSchema>>,
  env: Record<string, string | undefined>,
  problem: (path: string, message: string) => void,
): Map<string, ProviderEntry> {
  const providers = new Map<string, ProviderEntry>();
  for (const [providerName, spec] of Object.entries(specs)) {
    const tokenEnv = "token_env" in spec ? spec.token_env : undefined;
    const token = tokenEnv ? (env[tokenEnv] ?? "") : "";
    if (tokenEnv && token.trim() === "") {
      problem(`providers.${providerName}.token_env`, `the environment variable ${tokenEnv} is not set`);
    }
    const url = "url" in spec && spec.url ? spec.url : DEFAULT_URLS[spec.type as UpstreamType];
    providers.set(providerName, {
      name: providerName,
      type: spec.type,
      ...(url ? { url } : {}),
      token: tokenEnv ? token.trim() : null,
      ...(tokenEnv ? { tokenEnv } : {}),
      ...(spec.max_concurrency ? { maxConcurrency: spec.max_concurrency } : {}),
    });
  }
  return providers;
}
