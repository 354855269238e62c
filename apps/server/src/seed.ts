/**
 * The `npm start` experience: on first start, create a demo
 * organization with a test balance and a demo key. The key is kept in the data directory (a
 * development convenience; seeding is off in production) so that later starts on the same store
 * print it again instead of creating another organization.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseUsd } from "@refvid/core";
import type { AppDeps } from "./deps.js";
import { newTopUpId } from "./ids.js";
import { createApiKey, createOrganization, hashApiKey } from "./services/admin.js";

export const DEMO_BALANCE_USD = "100.00";

export interface Demo {
  organizationId: string;
  apiKey: string;
  created: boolean;
}

export async function seedDemo(deps: AppDeps): Promise<Demo> {
  const file = join(resolve(deps.config.dataDir), "demo.json");
  const saved = await readFile(file, "utf8").then(
    (text) => JSON.parse(text) as { organizationId: string; apiKey: string },
    () => null,
  );
  if (saved && (await deps.store.findApiKeyByHash(hashApiKey(saved.apiKey))))
    return { ...saved, created: false };

  // The start-up itself makes the demo: the audit log names it `seed`.
  const actor = { name: "seed", requestId: "startup" };
  const org = await createOrganization(deps, actor, { name: "Demo organization" });
  await deps.store.addTopUp({
    id: newTopUpId(),
    organizationId: org.organization_id,
    amount: parseUsd(DEMO_BALANCE_USD) ?? 0,
    note: "demo balance",
    now: deps.clock.now(),
    actor,
  });
  const key = await createApiKey(deps, actor, org.organization_id, { environment: "test", name: "demo" });
  const demo = { organizationId: org.organization_id, apiKey: key.key };
  await writeFile(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  deps.logger.info({ organizationId: demo.organizationId }, "demo organization created");
  return { ...demo, created: true };
}
