/**
 * `PostgresStore implements Store` on a Postgres server (`pg`) or embedded PGlite, through one
 * small query interface. Each operation is a file under queries/; this class only binds them to a
 * database. Admission locks the organization row, then the key row, in that fixed order; ending a
 * run locks the run, then its organization and key. Counters live on those rows, so admission, poll
 * and account never scan history. The rules applied (admission, settlement, idempotency, top-ups,
 * the rate window) are core's.
 */
import type * as T from "../types.js";
import { BatchedStatements } from "./batched.js";
import type { Database } from "./database.js";
import * as q from "./queries/index.js";
import { CHANNEL } from "./queries/sql.js";

export class PostgresStore implements T.Store {
  /** What every authenticated request reads or counts, shared by the requests of one event-loop turn. */
  private readonly batched: BatchedStatements;

  constructor(private readonly db: Database) {
    this.batched = new BatchedStatements(db);
  }

  readonly createOrganization: T.Store["createOrganization"] = (...args) =>
    q.createOrganization(this.db, ...args);
  readonly getOrganization: T.Store["getOrganization"] = (...args) => q.getOrganization(this.db, ...args);
  readonly createApiKey: T.Store["createApiKey"] = (...args) => q.createApiKey(this.db, ...args);
  readonly getApiKey: T.Store["getApiKey"] = (...args) => q.getApiKey(this.db, ...args);
  readonly updateApiKey: T.Store["updateApiKey"] = (...args) => q.updateApiKey(this.db, ...args);
  readonly revokeApiKey: T.Store["revokeApiKey"] = (...args) => q.revokeApiKey(this.db, ...args);
  readonly addTopUp: T.Store["addTopUp"] = (...args) => q.addTopUp(this.db, ...args);
  readonly findApiKeyByHash: T.Store["findApiKeyByHash"] = (keyHash) =>
    this.batched.findApiKeyByHash(keyHash);
  readonly rotateWebhookSecret: T.Store["rotateWebhookSecret"] = (...args) =>
    q.rotateWebhookSecret(this.db, ...args);
  readonly countRequest: T.Store["countRequest"] = (...args) => this.batched.countRequest(...args);
  readonly admitRun: T.Store["admitRun"] = (input) => this.batched.admitRun(input);
  readonly completeIdempotency: T.Store["completeIdempotency"] = (...args) =>
    q.completeIdempotency(this.db, ...args);
  readonly hasIdempotencyKey: T.Store["hasIdempotencyKey"] = (...args) =>
    q.hasIdempotencyKey(this.db, ...args);
  readonly getRun: T.Store["getRun"] = (...args) => this.batched.getRun(...args);
  readonly searchRuns: T.Store["searchRuns"] = (...args) => q.searchRuns(this.db, ...args);
  readonly claimRuns: T.Store["claimRuns"] = (...args) => q.claimRuns(this.db, ...args);
  readonly renewLease: T.Store["renewLease"] = (...args) => q.renewLease(this.db, ...args);
  readonly acquireProvider: T.Store["acquireProvider"] = (...args) => q.acquireProvider(this.db, ...args);
  readonly releaseRun: T.Store["releaseRun"] = (...args) => q.releaseRun(this.db, ...args);
  readonly recordUpstream: T.Store["recordUpstream"] = (...args) => q.recordUpstream(this.db, ...args);
  readonly setProgress: T.Store["setProgress"] = (...args) => q.setProgress(this.db, ...args);
  readonly completeRun: T.Store["completeRun"] = (...args) => q.completeRun(this.db, ...args);
  readonly findOverdueRuns: T.Store["findOverdueRuns"] = (...args) => q.findOverdueRuns(this.db, ...args);
  readonly requeueExpiredLeases: T.Store["requeueExpiredLeases"] = (...args) =>
    q.requeueExpiredLeases(this.db, ...args);
  readonly claimWebhookDeliveries: T.Store["claimWebhookDeliveries"] = (...args) =>
    q.claimWebhookDeliveries(this.db, ...args);
  readonly recordWebhookAttempt: T.Store["recordWebhookAttempt"] = (...args) =>
    q.recordWebhookAttempt(this.db, ...args);
  readonly listWebhookDeliveries: T.Store["listWebhookDeliveries"] = (...args) =>
    q.listWebhookDeliveries(this.db, ...args);
  readonly searchWebhookDeliveries: T.Store["searchWebhookDeliveries"] = (...args) =>
    q.searchWebhookDeliveries(this.db, ...args);
  readonly getWebhookDelivery: T.Store["getWebhookDelivery"] = (...args) =>
    q.getWebhookDelivery(this.db, ...args);
  readonly redeliverWebhook: T.Store["redeliverWebhook"] = (...args) => q.redeliverWebhook(this.db, ...args);
  readonly listOrganizations: T.Store["listOrganizations"] = (...args) =>
    q.listOrganizations(this.db, ...args);
  readonly listApiKeys: T.Store["listApiKeys"] = (...args) => q.listApiKeys(this.db, ...args);
  readonly listTopUps: T.Store["listTopUps"] = (...args) => q.listTopUps(this.db, ...args);
  readonly searchAllRuns: T.Store["searchAllRuns"] = (...args) => q.searchAllRuns(this.db, ...args);
  readonly usage: T.Store["usage"] = (...args) => q.usage(this.db, ...args);

  readonly serviceStats: T.Store["serviceStats"] = () => q.serviceStats(this.db);
  readonly createUpload: T.Store["createUpload"] = (...args) => q.createUpload(this.db, ...args);
  readonly getUpload: T.Store["getUpload"] = (...args) => q.getUpload(this.db, ...args);
  readonly deleteUpload: T.Store["deleteUpload"] = (...args) => q.deleteUpload(this.db, ...args);
  readonly deleteExpiredUploads: T.Store["deleteExpiredUploads"] = (...args) =>
    q.deleteExpiredUploads(this.db, ...args);

  async subscribe(listener: (event: T.StoreEvent) => void) {
    return this.db.listen(CHANNEL, (payload) => {
      try {
        listener(JSON.parse(payload) as T.StoreEvent);
      } catch {
        // not one of ours
      }
    });
  }

  async ping() {
    await this.db.query("select 1");
  }

  async close() {
    await this.db.close();
  }
}
