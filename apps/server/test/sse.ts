/** A reader of refvid's run event streams for tests: the raw protocol, parsed by hand on purpose. */

export interface SseEvent {
  id: string;
  event: string;
  data: any;
  at: number;
}

/** Opens a stream and collects its events until the server closes it (or `until` is met). */
export async function stream(
  baseUrl: string,
  apiKey: string,
  runId: string,
  options: {
    lastEventId?: string;
    until?: (events: SseEvent[], comments: string[]) => boolean;
    signal?: AbortSignal;
  } = {},
): Promise<{ status: number; headers: Headers; events: SseEvent[]; comments: string[]; json?: any }> {
  const res = await fetch(`${baseUrl}/v1/runs/${runId}/events`, {
    headers: {
      authorization: `Key ${apiKey}`,
      ...(options.lastEventId ? { "last-event-id": options.lastEventId } : {}),
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!res.headers.get("content-type")?.startsWith("text/event-stream")) {
    return { status: res.status, headers: res.headers, events: [], comments: [], json: await res.json() };
  }
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.startsWith(":")) {
        comments.push(block);
        continue;
      }
      const field = (name: string) =>
        block
          .split("\n")
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? "";
      events.push({
        id: field("id"),
        event: field("event"),
        data: JSON.parse(field("data")),
        at: Date.now(),
      });
    }
    if (options.until?.(events, comments)) {
      await reader.cancel();
      break;
    }
  }
  return { status: res.status, headers: res.headers, events, comments };
}
