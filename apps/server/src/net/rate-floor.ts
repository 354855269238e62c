/**
 * The minimum transfer rate of a download (issue 26, finding 3; docs/decisions.md, "Reference
 * media"): a peer that keeps a download open but sends less than the floor, averaged over a
 * window, is cut off, so a trickle just under the download timeout cannot hold a worker for all
 * of it.
 */

/** REFVID_MIN_DOWNLOAD_BYTES_PER_S, averaged over REFVID_MIN_DOWNLOAD_WINDOW_MS. */
export interface MinTransferRate {
  bytesPerSecond: number;
  windowMs: number;
}

/** The window is kept as this many slices, so it slides a tenth of itself at a time. */
const SLICES = 10;

/**
 * Watches one download, from the moment its request goes out: `count` each chunk as it arrives.
 * Nothing is checked during the first window (the grace for connecting, the server's first byte
 * and TCP slow start); from then on, every tenth of a window, the bytes of the last window must
 * reach `bytesPerSecond × windowMs`, or `onTooSlow` is called, once, with what arrived.
 *
 * Time is counted in timer ticks, not read from the clock: an event loop that stalls (a busy
 * process) delays the check with the bytes, rather than blaming the peer for our own pause.
 */
export class RateFloor {
  private readonly slices = new Array<number>(SLICES).fill(0);
  private ticks = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly floor: MinTransferRate,
    private readonly onTooSlow: (received: number) => void,
  ) {
    this.timer = setInterval(() => this.check(), Math.max(1, floor.windowMs / SLICES));
    this.timer.unref();
  }

  count(bytes: number): void {
    this.slices[this.ticks % SLICES] = (this.slices[this.ticks % SLICES] ?? 0) + bytes;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    this.ticks += 1;
    if (this.ticks >= SLICES) {
      const received = this.slices.reduce((sum, n) => sum + n, 0);
      if (received < (this.floor.bytesPerSecond * this.floor.windowMs) / 1000) {
        this.stop();
        this.onTooSlow(received);
        return;
      }
    }
    this.slices[this.ticks % SLICES] = 0; // the slice that left the window takes the next tenth
  }
}

/** What a peer cut off by the floor is told, in a client's terms. */
export function tooSlowMessage(host: string, received: number, floor: MinTransferRate): string {
  return `${host} sent ${received} bytes in ${floor.windowMs / 1000} s; a download must average at least ${floor.bytesPerSecond} bytes/s`;
}
