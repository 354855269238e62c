/**
 * Organizations, their API keys and top-ups, as the store keeps them: wallets, caps, budgets and
 * alert state (`AccountStore`, and the admin lists).
 */
import type {
  BalanceThreshold,
  BudgetAlertState,
  Environment,
  KeyBudget,
  KeyPriority,
  KeySpend,
  Micros,
  Tier,
  UploadQuotaOverride,
} from "@refvid/core";

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: Date;
  /** Top-ups minus charges. */
  balance: Micros;
  /** Sum of the reservations of runs in flight. */
  reserved: Micros;
  totalSpent: Micros;
  lifetimeTopUps: Micros;
  tier: Tier;
  concurrencyLimit: number;
  /** Live runs queued or processing, kept with each transition (never counted by a scan). */
  inFlight: number;
  /** Test runs queued or processing: held to the same cap, counted apart from live runs. */
  testInFlight: number;
  /**
   * The secret of each environment: a run's webhooks are signed with its environment's, and a key
   * reads and rotates only its own environment's (docs/decisions.md, "Test keys").
   */
  webhookSecrets: Record<Environment, WebhookSigningSecret>;
  /** The organization's own upload quota (`PATCH /admin/v1/organizations/{id}`); null parts are the default. */
  uploadQuota: UploadQuotaOverride;
  /** Its weight in the queue's fair share (1 to 1000; default 1). */
  queueWeight: number;
  /** Where its spend alerts go, and the wallet's alert state (core's alerts.ts). */
  alerts: OrganizationAlerts;
  /** Where its `video.completed` and `video.failed` events go; null: nowhere. */
  videoWebhookUrl: string | null;
}

export interface OrganizationAlerts {
  /** The organization's alert webhook URL; no alerts are sent without one. */
  webhookUrl: string | null;
  /** Its own wallet thresholds; null: the default (`DEFAULT_BALANCE_THRESHOLDS`). */
  thresholds: BalanceThreshold[] | null;
  /** The last top-up's amount, which shares of it are taken of. */
  lastTopUp: Micros;
  /** The threshold amounts fired and not armed again. */
  fired: Micros[];
}

/** What an organization's PATCH changes; a part left out keeps its value, null returns it to the default. */
export interface OrganizationPatch {
  uploadQuota?: Partial<UploadQuotaOverride>;
  queueWeight?: number;
  alertWebhookUrl?: string | null;
  /** null: back to the default thresholds. */
  balanceAlertThresholds?: BalanceThreshold[] | null;
  videoWebhookUrl?: string | null;
}

/** The secret that signs one environment's webhooks, and the one its last rotation replaced. */
export interface WebhookSigningSecret {
  secret: string;
  /** Signs alongside `secret` until `expiresAt`. */
  previous: { secret: string; expiresAt: Date } | null;
}

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  name: string | null;
  environment: Environment;
  /** SHA-256 of the secret, hex. The secret itself is never stored. */
  keyHash: string;
  keyPrefix: string;
  maxConcurrency: number;
  rateLimitPerMinute: number;
  /** Orders its organization's queued runs: its runs start before those of lower-priority keys. */
  priority: KeyPriority;
  inFlight: number;
  /** Its spend budget per period; null: none. */
  budget: KeyBudget | null;
  /** What it spent per period and what its runs in flight hold, kept whether or not it has a budget. */
  spend: KeySpend;
  /** The budget alerts sent this period. */
  budgetAlert: BudgetAlertState;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface TopUpRecord {
  id: string;
  organizationId: string;
  amount: Micros;
  note: string | null;
  createdAt: Date;
  /** The admin token that made it; null for top-ups made before tokens were named. */
  actor: string | null;
  /** When it was taken back (`reverseTopUp`); null while it stands. */
  reversedAt: Date | null;
}

export interface ApiKeyPatch {
  name?: string;
  maxConcurrency?: number;
  rateLimitPerMinute?: number;
  priority?: KeyPriority;
  /** null: no budget. */
  budget?: KeyBudget | null;
}
