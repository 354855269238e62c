/**
 * The Store contract: every adapter runs this suite (`describeStoreContract("MemoryStore", …)`).
 * It pins down the behaviour the services rely on, atomic admission and exactly-once endings
 * above all, so that swapping the store changes nothing a client can see.
 */
import { describe } from "vitest";
import type { Store } from "../types.js";
import { accountsContract } from "./accounts.contract.js";
import { adminListsContract } from "./admin-lists.contract.js";
import { admissionContract } from "./admission.contract.js";
import { alertsContract } from "./alerts.contract.js";
import { environmentsContract } from "./environments.contract.js";
import { eventsContract } from "./events.contract.js";
import { invariantsContract } from "./invariants.contract.js";
import { ledgerContract } from "./ledger.contract.js";
import { lifecycleContract } from "./lifecycle.contract.js";
import { priceUnitContract } from "./price-unit.contract.js";
import { providersContract } from "./providers.contract.js";
import { queueContract } from "./queue.contract.js";
import { runCostsContract } from "./run-costs.contract.js";
import { searchContract } from "./search.contract.js";
import { statsContract } from "./stats.contract.js";
import { uploadsContract } from "./uploads.contract.js";
import { usageContract } from "./usage.contract.js";
import { vendorLogContract } from "./vendor-log.contract.js";
import { videosContract } from "./videos.contract.js";
import { webhookEventsContract } from "./webhook-events.contract.js";
import { webhookLogContract } from "./webhook-log.contract.js";
import { webhooksContract } from "./webhooks.contract.js";

export type StoreFactory = () => Promise<Store>;

export function describeStoreContract(name: string, makeStore: StoreFactory): void {
  describe(`${name} implements Store`, () => {
    accountsContract(makeStore);
    admissionContract(makeStore);
    environmentsContract(makeStore);
    eventsContract(makeStore);
    lifecycleContract(makeStore);
    runCostsContract(makeStore);
    priceUnitContract(makeStore);
    providersContract(makeStore);
    queueContract(makeStore);
    searchContract(makeStore);
    statsContract(makeStore);
    webhooksContract(makeStore);
    webhookLogContract(makeStore);
    webhookEventsContract(makeStore);
    vendorLogContract(makeStore);
    videosContract(makeStore);
    invariantsContract(makeStore);
    ledgerContract(makeStore);
    alertsContract(makeStore);
    adminListsContract(makeStore);
    usageContract(makeStore);
    uploadsContract(makeStore);
  });
}

export * from "./fixtures.js";
