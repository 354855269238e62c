/**
 * The worker's two pools of slots (issue 26, finding 3; docs/decisions.md, "Postgres and
 * scale"): generation slots (REFVID_WORKER_CONCURRENCY), which a claimed run holds while its
 * provider works, and download slots (REFVID_WORKER_DOWNLOAD_SLOTS), which it holds instead while
 * its references are downloaded and checked. A run waiting on a slow reference so never holds a
 * slot another organization's run could generate in, and one organization's runs hold at most
 * half of the download slots, so its slow references cannot keep everyone else from downloading.
 * Each process counts its own slots.
 */

/** No download slot is free to the run's organization: the run goes back to the queue. */
export class DownloadsFull extends Error {
  constructor(readonly organizationId: string) {
    super("no download slot is free to the run's organization");
  }
}

/** Runs `download` (a run's reference preflight) on a download slot rather than a generation slot. */
export type DownloadGate = <T>(download: () => Promise<T>) => Promise<T>;

/**
 * `generating`: holds a generation slot (from its claim on, unless it downloads);
 * `downloading`: holds a download slot; `waiting`: its references are ready and it waits for a
 * generation slot; `ending`: holds neither (its download failed or its wait was stopped).
 */
type Phase = "generating" | "downloading" | "waiting" | "ending";

interface Held {
  organizationId: string;
  phase: Phase;
}

export class WorkerSlots {
  private readonly runs = new Map<string, Held>();
  /** Runs whose references are ready, first come first served, ahead of any new claim. */
  private readonly waiters: { held: Held; take: () => void }[] = [];
  /** The download slots one organization's runs may hold at once: half of them. */
  readonly organizationShare: number;

  constructor(
    readonly generation: number,
    readonly downloads: number,
    /** A slot came free: the claim loop may find work for it. */
    private readonly onFree: () => void,
  ) {
    this.organizationShare = Math.max(1, Math.ceil(downloads / 2));
  }

  /** Runs the claim loop may claim now: free generation slots not promised to a waiting run. */
  get claimable(): number {
    return this.generation - this.count("generating") - this.count("waiting");
  }

  get downloadsFull(): boolean {
    return this.count("downloading") >= this.downloads;
  }

  /** Organizations whose runs hold their share of the download slots. */
  organizationsAtShare(): string[] {
    const held = new Map<string, number>();
    for (const run of this.runs.values()) {
      if (run.phase === "downloading") held.set(run.organizationId, (held.get(run.organizationId) ?? 0) + 1);
    }
    return [...held].filter(([, n]) => n >= this.organizationShare).map(([organizationId]) => organizationId);
  }

  /** A claimed run takes a generation slot. */
  claimed(run: { id: string; organizationId: string }): void {
    this.runs.set(run.id, { organizationId: run.organizationId, phase: "generating" });
  }

  /** The run ended (or went back to the queue): whatever slot it held is free. */
  let(runId: string): void {
    const held = this.runs.get(runId);
    if (!held) return;
    this.runs.delete(runId);
    const waiting = this.waiters.findIndex((w) => w.held === held);
    if (waiting >= 0) this.waiters.splice(waiting, 1);
    if (held.phase === "generating") this.handOn();
    else if (held.phase === "downloading") this.onFree();
  }

  /** The gate through which one run's attempt downloads its references. */
  gateFor(runId: string, signal: AbortSignal): DownloadGate {
    return (download) => this.download(runId, signal, download);
  }

  /**
   * Gives up the run's generation slot for a download slot while `download` runs, then waits for a
   * generation slot (ahead of new claims) and returns what `download` gave. Throws `DownloadsFull`,
   * before anything is downloaded, when no download slot is free to the run's organization; and
   * the signal's reason when the run is stopped while it waits.
   */
  async download<T>(runId: string, signal: AbortSignal, download: () => Promise<T>): Promise<T> {
    const held = this.runs.get(runId);
    if (held?.phase !== "generating") return download(); // not a slot this worker counts
    if (this.downloadsFull || this.organizationsAtShare().includes(held.organizationId)) {
      throw new DownloadsFull(held.organizationId);
    }
    held.phase = "downloading";
    this.handOn();
    let result: T;
    try {
      result = await download();
    } catch (err) {
      held.phase = "ending";
      this.onFree();
      throw err;
    }
    held.phase = "waiting";
    this.onFree(); // the download slot
    await this.generationSlot(held, signal);
    return result;
  }

  private generationSlot(held: Held, signal: AbortSignal): Promise<void> {
    if (this.count("generating") < this.generation) {
      held.phase = "generating";
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const stop = () => {
        const at = this.waiters.findIndex((w) => w.held === held);
        if (at >= 0) this.waiters.splice(at, 1);
        held.phase = "ending";
        reject(signal.reason);
      };
      if (signal.aborted) return stop();
      signal.addEventListener("abort", stop, { once: true });
      this.waiters.push({
        held,
        take: () => {
          signal.removeEventListener("abort", stop);
          held.phase = "generating";
          resolve();
        },
      });
    });
  }

  /** A generation slot came free: to the first waiting run, else to the claim loop. */
  private handOn(): void {
    while (this.count("generating") < this.generation) {
      const next = this.waiters.shift();
      if (!next) {
        this.onFree();
        return;
      }
      next.take();
    }
  }

  private count(phase: Phase): number {
    let n = 0;
    for (const run of this.runs.values()) if (run.phase === phase) n++;
    return n;
  }
}
