/** Builders shared by the contract suite and the property tests. */
import { createHash, randomUUID } from "node:crypto";
import {
  amountFor,
  type KeyBudget,
  type KeyPriority,
  type Micros,
  type PriceUnit,
  type WebhookSubscription,
} from "@refvid/core";
import type { Environment, NewRun, Store } from "../types.js";

export const T0 = new Date("2026-11-22T10:00:00.000Z");
export const at = (ms: number) => new Date(T0.getTime() + ms);
/** The webhook secrets `makeTenant` gives each organization, one per environment. */
export const WEBHOOK_SECRETS = { live: "whsec_bGl2ZQ==", test: "whsec_dGVzdA==" } as const;

export interface Tenant {
  organizationId: string;
  apiKeyId: string;
  keyHash: string;
  environment: Environment;
}

/** The scope a tenant's key searches in: its organization and its environment. */
export const scopeOf = (tenant: Tenant) => ({
  organizationId: tenant.organizationId,
  environment: tenant.environment,
});

/** An organization with one key (live unless asked) and `balance` micros in its wallet. */
export async function makeTenant(
  store: Store,
  options: {
    balance?: Micros;
    maxConcurrency?: number;
    rateLimitPerMinute?: number;
    environment?: Environment;
    priority?: KeyPriority;
    budget?: KeyBudget;
  } = {},
): Promise<Tenant> {
  const organizationId = `org_${randomUUID().replaceAll("-", "")}`;
  await store.createOrganization({
    id: organizationId,
    name: "Acme",
    webhookSecrets: WEBHOOK_SECRETS,
    now: T0,
  });
  const tenant = await addKey(store, organizationId, options);
  if (options.balance) {
    await store.addTopUp({
      id: `top_${randomUUID()}`,
      organizationId,
      amount: options.balance,
      note: null,
      now: T0,
    });
  }
  return tenant;
}

/** Another key of an organization. */
export async function addKey(
  store: Store,
  organizationId: string,
  options: {
    maxConcurrency?: number;
    rateLimitPerMinute?: number;
    environment?: Environment;
    priority?: KeyPriority;
    budget?: KeyBudget;
  } = {},
): Promise<Tenant> {
  const environment = options.environment ?? "live";
  const secret = `sk-${environment}-${randomUUID()}`;
  const keyHash = createHash("sha256").update(secret).digest("hex");
  const apiKeyId = `key_${randomUUID().replaceAll("-", "")}`;
  await store.createApiKey({
    id: apiKeyId,
    organizationId,
    name: environment,
    environment,
    keyHash,
    keyPrefix: secret.slice(0, 12),
    maxConcurrency: options.maxConcurrency ?? 10,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 120,
    ...(options.priority ? { priority: options.priority } : {}),
    ...(options.budget ? { budget: options.budget } : {}),
    now: T0,
  });
  return { organizationId, apiKeyId, keyHash, environment };
}

let sequence = 0;

/** A queued run of `tenant` reserving `seconds` x `unitPrice` (per second), or `unitPrice` (per run). */
export function newRun(
  tenant: Tenant,
  options: {
    priceUnit?: PriceUnit;
    unitPrice?: Micros;
    seconds?: number;
    createdAt?: Date;
    webhookUrl?: string;
    webhookEvents?: WebhookSubscription[];
    metadata?: Record<string, string>;
    endpoint?: NewRun["endpoint"];
  } = {},
): NewRun {
  const priceUnit = options.priceUnit ?? "second";
  const unitPrice = options.unitPrice ?? 100_000;
  const seconds = options.seconds ?? 5;
  sequence += 1;
  return {
    id: `run_${randomUUID()}`,
    organizationId: tenant.organizationId,
    apiKeyId: tenant.apiKeyId,
    endpoint: options.endpoint ?? "lab-d/model-d/reference-to-video",
    input: { prompt: `run ${sequence}` },
    webhookUrl: options.webhookUrl ?? null,
    ...(options.webhookEvents ? { webhookEvents: options.webhookEvents } : {}),
    metadata: options.metadata ?? {},
    priceUnit,
    unitPrice,
    reservedSeconds: seconds,
    reserved: amountFor({ unit: priceUnit, unitPrice }, seconds),
    createdAt: options.createdAt ?? at(sequence),
  };
}

export const succeeded = (charged: Micros, billableSeconds = 5) =>
  ({
    status: "succeeded",
    output: {
      fileId: `file_${randomUUID()}`,
      fileName: "out.mp4",
      contentType: "video/mp4",
      durationSeconds: billableSeconds,
    },
    billableSeconds,
    charged,
  }) as const;

export const failed = {
  status: "failed",
  error: { type: "provider_error", code: 502, message: "boom" },
} as const;

/** The timing part of a webhook attempt's result: sent at `startedAt`, ended at `now`. */
export const attempt = (startedAt: Date, now: Date, status: number | null) => ({
  startedAt,
  now,
  durationMs: now.getTime() - startedAt.getTime(),
  status,
});
