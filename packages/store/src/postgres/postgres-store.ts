/**
 * `PostgresStore implements Store` on a Postgres server (`pg`) or embedded PGlite, through one
 * small query interface. Each operation is a file under queries/; this class only binds them to a
 * database. Admission locks the organization row, then the key row, in that fixed order; ending a
 * run locks the run, then its organization and key. Counters live on those rows, so admission, poll
 * and account never scan history. The rules applied (admission, settlement, idempotency, top-ups,
 * the rate window) are core's.
 *
 * Run events: each change is announced to this store's subscribers once its transaction has
 * committed, and sent to other processes by a NOTIFY in the same transaction, stamped with this
 * store's `origin`; the echo of its own NOTIFY is ignored, so each event is heard once.
 */
import { randomBytes } from "node:crypto";
import { isConnectionLost } from "../connection-lost.js";
import { StoreEventHub } from "../store-events.js";
import type * as T from "../types.js";
import { BatchedStatements } from "./batched.js";
import type { Database } from "./database.js";
import * as q from "./queries/index.js";
import { CHANNEL } from "./queries/sql.js";

export class PostgresStore implements T.Store {
  /** What every authenticated request reads or counts, shared by the requests of one event-loop turn. */
  private readonly batched: BatchedStatements;
  /** Names this store in its notifications: the echo of its own is not heard twice. */
  private readonly origin = `${process.pid}-${randomBytes(6).toString("hex")}`;
  private readonly events = new StoreEventHub();

  constructor(private readonly db: Database) {
    this.batched = new BatchedStatements(db, this.origin);
  }

  readonly createOrganization: T.Store["createOrganization"] = (...args) =>
    q.createOrganization(this.db, ...args);
  readonly getOrganization: T.Store["getOrganization"] = (...args) => q.getOrganization(this.db, ...args);
  readonly updateOrganization: T.Store["updateOrganization"] = (...args) =>
    q.updateOrganization(this.db, ...args);
  readonly createApiKey: T.Store["createApiKey"] = (...args) => q.createApiKey(this.db, ...args);
  readonly getApiKey: T.Store["getApiKey"] = (...args) => q.getApiKey(this.db, ...args);
  readonly updateApiKey: T.Store["updateApiKey"] = (...args) => q.updateApiKey(this.db, ...args);
  readonly revokeApiKey: T.Store["revokeApiKey"] = (...args) => q.revokeApiKey(this.db, ...args);
  readonly addTopUp: T.Store["addTopUp"] = (...args) => q.addTopUp(this.db, ...args);
  readonly reverseTopUp: T.Store["reverseTopUp"] = (...args) => q.reverseTopUp(this.db, ...args);
  readonly adjustBalance: T.Store["adjustBalance"] = (...args) => q.adjustBalance(this.db, ...args);
  readonly listLedger: T.Store["listLedger"] = (...args) => q.listLedger(this.db, ...args);
  readonly recordAudit: T.Store["recordAudit"] = (...args) => q.recordAudit(this.db, ...args);
  readonly listAudit: T.Store["listAudit"] = (...args) => q.listAudit(this.db, ...args);
  readonly findApiKeyByHash: T.Store["findApiKeyByHash"] = (keyHash) =>
    this.batched.findApiKeyByHash(keyHash);
  readonly rotateWebhookSecret: T.Store["rotateWebhookSecret"] = (...args) =>
    q.rotateWebhookSecret(this.db, ...args);
  readonly countRequest: T.Store["countRequest"] = (...args) => this.batched.countRequest(...args);
  readonly admitRun: T.Store["admitRun"] = async (input) => {
    const result = await this.batched.admitRun(input);
    if (result.kind === "admitted") this.events.emit({ kind: "queued" });
    return result;
  };
  readonly completeIdempotency: T.Store["completeIdempotency"] = (...args) =>
    q.completeIdempotency(this.db, ...args);
  readonly hasIdempotencyKey: T.Store["hasIdempotencyKey"] = (...args) =>
    q.hasIdempotencyKey(this.db, ...args);
  readonly getRun: T.Store["getRun"] = (...args) => this.batched.getRun(...args);
  readonly getRunById: T.Store["getRunById"] = (...args) => this.batched.getRunById(...args);
  readonly searchRuns: T.Store["searchRuns"] = (...args) => q.searchRuns(this.db, ...args);
  readonly deleteVideo: T.Store["deleteVideo"] = (...args) => q.deleteVideo(this.db, ...args);
  readonly claimRuns: T.Store["claimRuns"] = async (input) => {
    const runs = await q.claimRuns(this.db, this.origin, input);
    if (runs.length > 0) this.events.emit({ kind: "changed", runIds: runs.map((run) => run.id) });
    return runs;
  };
  readonly renewLease: T.Store["renewLease"] = (...args) => q.renewLease(this.db, ...args);
  readonly acquireProvider: T.Store["acquireProvider"] = (...args) => q.acquireProvider(this.db, ...args);
  readonly releaseRun: T.Store["releaseRun"] = (...args) => q.releaseRun(this.db, ...args);
  readonly queueStanding: T.Store["queueStanding"] = (...args) => q.queueStanding(this.db, ...args);
  readonly recentDurations: T.Store["recentDurations"] = (...args) => q.recentDurations(this.db, ...args);
  readonly recordUpstream: T.Store["recordUpstream"] = (...args) => q.recordUpstream(this.db, ...args);
  readonly addVendorEvent: T.Store["addVendorEvent"] = async (event) => {
    await q.addVendorEvent(this.db, this.origin, event);
    if (event.kind === "hook") this.events.emit({ kind: "vendor", runId: event.runId });
  };
  readonly listVendorEvents: T.Store["listVendorEvents"] = (...args) => q.listVendorEvents(this.db, ...args);
  readonly vendorHookPayload: T.Store["vendorHookPayload"] = (...args) =>
    q.vendorHookPayload(this.db, ...args);
  readonly findRunByUpstream: T.Store["findRunByUpstream"] = (...args) =>
    q.findRunByUpstream(this.db, ...args);
  readonly setQueuePosition: T.Store["setQueuePosition"] = async (runId, position, now) => {
    if (await q.setQueuePosition(this.db, this.origin, runId, position, now)) {
      this.events.emit({ kind: "changed", runIds: [runId] });
    }
  };
  readonly setProgress: T.Store["setProgress"] = async (runId, progress, now) => {
    if (await q.setProgress(this.db, this.origin, runId, progress, now)) {
      this.events.emit({ kind: "changed", runIds: [runId] });
    }
  };
  readonly completeRun: T.Store["completeRun"] = async (input) => {
    try {
      const result = await q.completeRun(this.db, this.origin, input);
      if (result.kind === "completed") this.events.emit({ kind: "ended", runId: input.runId });
      return result;
    } catch (err) {
      // The commit may have gone through unanswered: listeners look at the run and find out.
      if (isConnectionLost(err) && err.committed === "unknown") {
        this.events.emit({ kind: "ended", runId: input.runId });
      }
      throw err;
    }
  };
  readonly findOverdueRuns: T.Store["findOverdueRuns"] = (...args) => q.findOverdueRuns(this.db, ...args);
  readonly requeueExpiredLeases: T.Store["requeueExpiredLeases"] = async (input) => {
    const result = await q.requeueExpiredLeases(this.db, this.origin, input);
    if (result.requeued.length > 0) this.events.emit({ kind: "queued" });
    return result;
  };
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
  readonly uploadUsage: T.Store["uploadUsage"] = (...args) => q.uploadUsage(this.db, ...args);
  readonly deleteUpload: T.Store["deleteUpload"] = (...args) => q.deleteUpload(this.db, ...args);
  readonly deleteExpiredUploads: T.Store["deleteExpiredUploads"] = (...args) =>
    q.deleteExpiredUploads(this.db, ...args);

  /**
   * This store's own changes as they commit, and other processes' through LISTEN on a connection of
   * the subscription's own (with its `subscription` state while that connection is lost).
   */
  async subscribe(listener: (event: T.StoreEvent) => void) {
    const removeLocal = this.events.add(listener);
    const unlisten = await this.db
      .listen(CHANNEL, (payload) => {
        const event = fromNotification(payload, this.origin);
        if (event) listener(event);
      })
      .catch((err: unknown) => {
        removeLocal();
        throw err;
      });
    return async () => {
      removeLocal();
      await unlisten();
    };
  }

  async ping() {
    await this.db.query("select 1");
  }

  async close() {
    await this.db.close();
  }
}

const KINDS = new Set<string>(["queued", "ended", "changed", "vendor", "subscription"]);

/** A notification's event, without its origin; null for this store's own echo or a stranger's payload. */
function fromNotification(payload: string, ownOrigin: string): T.StoreEvent | null {
  let parsed: { kind?: unknown; origin?: unknown };
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null; // not one of ours
  }
  if (typeof parsed?.kind !== "string" || !KINDS.has(parsed.kind)) return null;
  if (parsed.origin === ownOrigin) return null;
  const { origin: _origin, ...event } = parsed;
  return event as T.StoreEvent;
}
