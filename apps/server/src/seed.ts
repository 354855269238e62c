/**
 * The `npm start` experience (DESIGN.md, "Operator contract"): when the store has no demo
 * organization yet, create one with a test balance and a demo key, and print how to use it.
 */
import { formatUsd, parseUsd } from "@refvid/core";
import type { AppDeps } from "./deps.js";
import { newTopUpId } from "./ids.js";
import { createApiKey, createOrganization } from "./services/admin.js";

export const DEMO_BALANCE_USD = "100.00";

export async function seedDemo(deps: AppDeps): Promise<{ organizationId: string; apiKey: string }> {
  const org = await createOrganization(deps, { name: "Demo organization" });
  await deps.store.addTopUp({
    id: newTopUpId(),
    organizationId: org.organization_id,
    amount: parseUsd(DEMO_BALANCE_USD) ?? 0,
    note: "demo balance",
    now: deps.clock.now(),
  });
  const key = await createApiKey(deps, org.organization_id, { environment: "test", name: "demo" });
  deps.logger.info(
    { organizationId: org.organization_id, balanceUsd: formatUsd(parseUsd(DEMO_BALANCE_USD) ?? 0) },
    "demo organization created",
  );
  return { organizationId: org.organization_id, apiKey: key.key };
}
