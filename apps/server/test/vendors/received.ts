/**
 * What a protocol server received, kept so that a test can say exactly what reached the vendor,
 * or that nothing did: every request answered, in the order answered, with the body it carried.
 */

export interface ReceivedRequest<Kind extends string = string> {
  method: string;
  /** The path without the query. */
  path: string;
  /** What the request does, in the server's own terms (submit, status, cancel, ...). */
  kind: Kind;
  /** The status it was answered with. */
  status: number;
  /** The body parsed as JSON, its text when it is not JSON, null when there was none. */
  body: unknown;
}

/** A body as recorded; `null` text stands for one larger than the server reads. */
export function recordedBody(text: string | null): unknown {
  if (text === null) return "(larger than the server reads)";
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
