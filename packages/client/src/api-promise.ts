/** The promise a single-request helper returns, with the HTTP response available on request. */

/** What {@link ApiPromise.withResponse} resolves to. */
export interface WithResponse<T> {
  /** The parsed body: what awaiting the call itself gives. */
  data: T;
  /** The HTTP response, for its status and headers (e.g. `Idempotent-Replayed`); its body is already read. */
  response: Response;
  /** The response's `X-Request-Id`: quote it when asking for support. */
  requestId: string | undefined;
}

/**
 * A promise of a helper's data which can also hand out the HTTP response: `await` it for the
 * data, or `await` its {@link ApiPromise.withResponse} for `{ data, response, requestId }`. Both
 * read the same single request; it is sent at once, whichever is used.
 *
 * @example
 * const run = await refvid.getRun(runId);
 * const { data, requestId } = await refvid.getRun(runId).withResponse();
 */
export class ApiPromise<T> extends Promise<T> {
  readonly #result: Promise<WithResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(result: Promise<WithResponse<T>>) {
    // The base promise is never read: then, catch and finally below go to `result` instead.
    super((resolve) => resolve(undefined as T));
    this.#result = result;
  }

  /** The data together with the HTTP response and its request id; rejects as the call does. */
  withResponse(): Promise<WithResponse<T>> {
    return this.#result;
  }

  /** Made on first use, so that using only `withResponse()` leaves no unobserved rejection behind. */
  #parsed(): Promise<T> {
    this.#data ??= this.#result.then((result) => result.data);
    return this.#data;
  }

  // biome-ignore lint/suspicious/noThenProperty: this is a promise; `then` yields the data of the result.
  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#parsed().then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#parsed().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#parsed().finally(onfinally);
  }
}
