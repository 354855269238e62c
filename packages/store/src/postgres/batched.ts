/**
 * The reads and the rate count every authenticated request makes, and admissions, batched: the
 * requests that reach them in one turn of the event loop (what one wake-up of the HTTP server read)
 * share one statement, or for admissions one transaction, and its round trips. On a busy API
 * process a round trip costs more than the query, so a poll is
 * one rate count and one read, each shared with its neighbours, instead of two of its own. Each
 * batch is sent once the turn's I/O is handled (`setImmediate`), so a lone request waits for
 * nothing. Nothing is cached: every request reads what is committed when its batch is sent.
 * See docs/decisions.md, "Hot path".
 */
import type { RateDecision } from "@refvid/core";
import DataLoader from "dataloader";
import type * as T from "../types.js";
import { ConnectionLostError, type Database } from "./database.js";
import * as q from "./queries/index.js";
import { asError } from "./rows.js";

/** Statements stay small; a bigger burst goes out in several. */
const MAX_BATCH = 500;

const options = {
  cache: false,
  maxBatchSize: MAX_BATCH,
  batchScheduleFn: (send: () => void) => setImmediate(send),
} as const;

type Found = Awaited<ReturnType<T.Store["findApiKeyByHash"]>>;

/**
 * Admits a batch, each submit as it would be alone. A submit naming an Idempotency-Key an earlier
 * one of the batch names waits for the next transaction, where it finds the first one's record. If
 * the transaction fails for any reason but a lost connection, each submit is tried alone, so one
 * bad submit cannot fail its neighbours.
 */
async function admitInTurn(
  db: Database,
  origin: string,
  inputs: readonly q.AdmitInput[],
): Promise<(T.AdmitResult | Error)[]> {
  const now: number[] = [];
  const later: number[] = [];
  const keys = new Set<string>();
  inputs.forEach((input, index) => {
    const key = input.idempotency ? `${input.run.organizationId}\u0000${input.idempotency.key}` : null;
    if (key && keys.has(key)) later.push(index);
    else {
      if (key) keys.add(key);
      now.push(index);
    }
  });
  const results: (T.AdmitResult | Error)[] = new Array(inputs.length);
  const batch = now.map((i) => inputs[i] as q.AdmitInput);
  try {
    (await q.admitRuns(db, origin, batch)).forEach((result, j) => {
      results[now[j] as number] = result;
    });
  } catch (err) {
    if (batch.length === 1 || err instanceof ConnectionLostError) {
      for (const i of now) results[i] = asError(err);
    } else {
      for (const i of now) {
        const [one] = await q
          .admitRuns(db, origin, [inputs[i] as q.AdmitInput])
          .catch((e: unknown) => [asError(e)]);
        results[i] = one as T.AdmitResult | Error;
      }
    }
  }
  // What the first transaction admitted is answered as admitted, whatever happens to the rest.
  if (later.length > 0) {
    const rest = await admitInTurn(
      db,
      origin,
      later.map((i) => inputs[i] as q.AdmitInput),
    ).catch((err: unknown) => later.map(() => asError(err)));
    later.forEach((i, j) => {
      results[i] = rest[j] as T.AdmitResult | Error;
    });
  }
  return results;
}

export class BatchedStatements {
  private readonly counts: DataLoader<q.CountedRequest & { now: Date }, RateDecision>;
  private readonly runs: DataLoader<string, T.RunRecord | null>;
  private readonly keys: DataLoader<string, Found>;
  private readonly admissions: DataLoader<q.AdmitInput, T.AdmitResult>;

  /** `origin` names the store in the notifications its admissions send. */
  constructor(db: Database, origin: string) {
    this.counts = new DataLoader(async (requests) => {
      // One clock for the batch: its requests arrived within the same turn.
      const now = requests.reduce(
        (latest, r) => (r.now > latest ? r.now : latest),
        requests[0]?.now ?? new Date(),
      );
      return q.countRequests(db, requests, now);
    }, options);
    // A row that cannot be read comes back as its Error, which fails that request alone.
    this.runs = new DataLoader(async (ids) => {
      const found = await q.getRuns(db, ids);
      return ids.map((id) => found.get(id) ?? null);
    }, options);
    this.admissions = new DataLoader((inputs) => admitInTurn(db, origin, inputs), options);
    this.keys = new DataLoader(async (hashes) => {
      const found = await q.findApiKeysByHash(db, hashes);
      return hashes.map((hash) => found.get(hash) ?? null);
    }, options);
  }

  countRequest(apiKeyId: string, limit: number, now: Date): Promise<RateDecision> {
    return this.counts.load({ apiKeyId, limit, now });
  }

  /** The run, if it belongs to the organization; another organization's is not found. */
  async getRun(organizationId: string, runId: string): Promise<T.RunRecord | null> {
    const run = await this.runs.load(runId);
    return run && run.organizationId === organizationId ? run : null;
  }

  /** The run, whichever organization's (the service's own reads: vendor webhooks). */
  getRunById(runId: string): Promise<T.RunRecord | null> {
    return this.runs.load(runId);
  }

  admitRun(input: q.AdmitInput): Promise<T.AdmitResult> {
    return this.admissions.load(input);
  }

  findApiKeyByHash(keyHash: string): Promise<Found> {
    return this.keys.load(keyHash);
  }
}
