/** What the operators' reads take and give: the admin lists, the cross-organization run search and usage. */
import type { Environment, Micros, ModelSlug, RunStatus } from "@refvid/core";
import type { Keyset } from "./types.js";

/** The operators' run search: every organization and both environments unless filtered. */
export interface AdminRunSearch {
  organizationId?: string;
  environment?: Environment;
  apiKeyId?: string;
  statuses?: RunStatus[];
  endpoint?: ModelSlug;
  createdAfter?: Date;
  createdBefore?: Date;
  limit: number;
  after?: Keyset;
}

export interface OrganizationSearch {
  /** Organizations whose name starts with this text (case-sensitive). */
  namePrefix?: string;
  limit: number;
  after?: Keyset;
}

export interface ApiKeySearch {
  organizationId: string;
  /** true: revoked keys only; false: keys in use only. */
  revoked?: boolean;
  limit: number;
  after?: Keyset;
}

export interface TopUpSearch {
  organizationId: string;
  limit: number;
  after?: Keyset;
}

export type UsageGroupBy = "api_key" | "model" | "provider" | "route" | "organization" | "day";

/** Usage of the runs created in `[from, to)`, of every organization unless one is named. */
export interface UsageQuery {
  from: Date;
  to: Date;
  groupBy: UsageGroupBy;
  organizationId?: string;
}

/**
 * The runs of one group and one environment: an api_key_id, an endpoint, a provider or a route
 * (runs without one are "unassigned"), an organization id or a UTC date (`2026-11-22`).
 */
export interface UsageRow {
  group: string;
  environment: Environment;
  /** Runs by their status now. */
  runs: Record<RunStatus, number>;
  /** Sum of the runs' billable seconds. */
  billableSeconds: number;
  /** Sum of the charges set on the runs, whether or not the wallet paid them (test runs). */
  charged: Micros;
  /** Sum of the vendor costs recorded on the runs; a run without one counts 0. */
  vendorCost: Micros;
}
