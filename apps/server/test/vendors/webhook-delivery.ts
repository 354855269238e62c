/**
 * Posting a webhook the way the vendors do, for the fal and Replicate protocol servers: the same
 * body on every attempt, fresh headers each time (signatures carry the attempt's timestamp), no
 * redirects followed (Replicate: "will not follow redirects"), and a retry after a non-2xx answer
 * or none at all.
 */

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export interface WebhookPost {
  url: string;
  body: string;
  /** The headers of one attempt. */
  headers(): Record<string, string>;
  /** The pauses before each retry: attempts are one more than these. */
  retryDelaysMs: readonly number[];
  /** Aborted when the server closes: no further attempt is made. */
  signal: AbortSignal;
  /** Called after each attempt with the receiver's status, null when it could not be reached. */
  onAttempt(attempt: number, responseStatus: number | null): void;
}

/** Posts until the receiver answers 2xx or the retries run out. */
export async function postWebhook(post: WebhookPost): Promise<void> {
  const attempts = 1 + post.retryDelaysMs.length;
  for (let attempt = 1; attempt <= attempts && !post.signal.aborted; attempt++) {
    let responseStatus: number | null = null;
    try {
      const res = await fetch(post.url, {
        method: "POST",
        headers: post.headers(),
        body: post.body,
        redirect: "manual",
        signal: AbortSignal.any([post.signal, AbortSignal.timeout(5_000)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      responseStatus = res.status;
    } catch {
      responseStatus = null;
    }
    post.onAttempt(attempt, responseStatus);
    if (responseStatus !== null && responseStatus >= 200 && responseStatus < 300) return;
    const pause = post.retryDelaysMs[attempt - 1];
    if (pause !== undefined) await sleep(pause, post.signal);
  }
}
