import type { FileUpload } from "@refvid/api-types";
import { describe, expect, expectTypeOf, it, onTestFinished, vi } from "vitest";
import { API_KEY, FAST_RETRY, sendJson, startServer } from "../test/server.js";
import { createRefvidClient, type RefvidClient } from "./client.js";
import { NotFoundError, RefvidError, ValidationError } from "./errors.js";
import { contentDisposition } from "./upload.js";

/** The start of a PNG, then every byte value, so that nothing survives a text round trip by luck. */
const BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array(256).keys()]);

const UPLOAD: FileUpload = {
  file_id: "upload_5f0c2a9d4b7e4c1a",
  url: "http://127.0.0.1/v1/files/upload_5f0c2a9d4b7e4c1a/content",
  content_type: "image/png",
  bytes: BYTES.length,
  file_name: "sculpture.png",
  created_at: "2025-01-01T00:00:00.000Z",
  expires_at: "2025-01-02T00:00:00.000Z",
};

/** A Blob that refuses to be read whole: only its stream may be used. */
class StreamOnlyBlob extends Blob {
  override arrayBuffer(): Promise<ArrayBuffer> {
    throw new Error("the upload read the Blob into memory (arrayBuffer)");
  }
  override text(): Promise<string> {
    throw new Error("the upload read the Blob into memory (text)");
  }
  override bytes(): Promise<Uint8Array> {
    throw new Error("the upload read the Blob into memory (bytes)");
  }
}

async function uploadServer(status = 201, body: unknown = UPLOAD, headers: Record<string, string> = {}) {
  const server = await startServer((_req, res) => sendJson(res, status, body, headers));
  return { server, client: createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY }) };
}

describe("uploadFile", () => {
  it.each<{
    name: string;
    file: () => Blob | ArrayBuffer | ArrayBufferView;
    options?: { fileName?: string; contentType?: string };
    bytes: Uint8Array;
    contentType: string;
    disposition: string | undefined;
  }>([
    {
      name: "a File: its type and name",
      file: () => new File([BYTES], "sculpture.png", { type: "image/png" }),
      bytes: BYTES,
      contentType: "image/png",
      disposition: 'attachment; filename="sculpture.png"',
    },
    {
      name: "a Blob without a type: application/octet-stream and no name",
      file: () => new Blob([BYTES]),
      bytes: BYTES,
      contentType: "application/octet-stream",
      disposition: undefined,
    },
    {
      name: "a Blob with the type and name given as options",
      file: () => new Blob([BYTES], { type: "image/png" }),
      options: { contentType: "video/mp4", fileName: "clip.mp4" },
      bytes: BYTES,
      contentType: "video/mp4",
      disposition: 'attachment; filename="clip.mp4"',
    },
    {
      name: "a File renamed by the options",
      file: () => new File([BYTES], "IMG_0001.PNG", { type: "image/png" }),
      options: { fileName: "front.png" },
      bytes: BYTES,
      contentType: "image/png",
      disposition: 'attachment; filename="front.png"',
    },
    {
      name: "an ArrayBuffer",
      file: () => BYTES.slice().buffer,
      bytes: BYTES,
      contentType: "application/octet-stream",
      disposition: undefined,
    },
    {
      name: "a view of part of a buffer: only the bytes it shows",
      file: () => BYTES.subarray(8, 24),
      options: { contentType: "audio/wav" },
      bytes: BYTES.subarray(8, 24),
      contentType: "audio/wav",
      disposition: undefined,
    },
    {
      name: "a name that is not ASCII: an ASCII stand-in and the UTF-8 name (RFC 6266)",
      file: () => new File([BYTES], "Gemälde 🖼.png", { type: "image/png" }),
      bytes: BYTES,
      contentType: "image/png",
      disposition: `attachment; filename="Gemalde _.png"; filename*=UTF-8''Gem%C3%A4lde%20%F0%9F%96%BC.png`,
    },
  ])("posts $name as the raw body", async ({ file, options, bytes, contentType, disposition }) => {
    const { server, client } = await uploadServer();
    await expect(client.uploadFile(file(), options)).resolves.toEqual(UPLOAD);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "POST", url: "/v1/files" });
    expect(new Uint8Array(request?.bytes ?? [])).toEqual(bytes);
    expect(request?.headers).toMatchObject({
      authorization: `Key ${API_KEY}`,
      "content-type": contentType,
      // The size is announced, so that the server can refuse a file too large before reading it.
      "content-length": String(bytes.length),
    });
    expect(request?.headers["content-disposition"]).toBe(disposition);
    expect(request?.headers["transfer-encoding"]).toBeUndefined();
  });

  it("hands a Blob to fetch as it is: never reads it into memory, and follows no redirect", async () => {
    const server = await startServer((_req, res) => sendJson(res, 201, UPLOAD));
    const sent: Request[] = [];
    const client = createRefvidClient({
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      fetch: (input, init) => {
        sent.push(input as Request);
        return fetch(input, init);
      },
    });
    const file = new StreamOnlyBlob([BYTES], { type: "image/png" });
    expect(() => file.arrayBuffer()).toThrow(/into memory/); // the trap works
    await client.uploadFile(file, { fileName: "sculpture.png" });
    expect(new Uint8Array(server.requests[0]?.bytes ?? [])).toEqual(BYTES);
    // Node's fetch would keep a copy of the whole body to replay it after a redirect.
    expect(sent.map((r) => r.redirect)).toEqual(["error"]);
  });

  it("is sent once: an upload carries no idempotency key, so it is neither retried nor its body cloned", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 503, { error: { type: "service_unavailable", code: 503, message: "draining" } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY, retry: FAST_RETRY });
    // A clone tees the body, and the branch kept for a retry buffers every byte of it.
    const clone = vi.spyOn(Request.prototype, "clone");
    onTestFinished(() => {
      clone.mockRestore();
    });
    await expect(client.uploadFile(new Blob([BYTES]))).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers["idempotency-key"]).toBeUndefined();
    expect(clone).not.toHaveBeenCalled();
    // The same client does retry, and clone, what is safe to repeat.
    await expect(client.getAccount()).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1 + 1 + FAST_RETRY.maxRetries);
    expect(clone).toHaveBeenCalled();
  });

  it.each([
    {
      status: 413,
      type: "payload_too_large",
      message: "file: is larger than 30 MB (31457280 bytes), the most any model takes for image references.",
    },
    {
      status: 415,
      type: "unsupported_media_type",
      message: "file: is not an image, video or audio file refvid reads; upload JPEG, PNG, MP4, MP3.",
    },
  ])("rejects a $status with a RefvidError carrying the server's type and message", async (row) => {
    const { client } = await uploadServer(
      row.status,
      { error: { type: row.type, code: row.status, message: row.message, request_id: "req_body" } },
      { "x-request-id": "req_upload" },
    );
    const error = await client.uploadFile(new Blob([BYTES], { type: "image/png" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RefvidError);
    expect(error).toMatchObject({
      name: "RefvidError",
      status: row.status,
      type: row.type,
      message: row.message,
      requestId: "req_upload",
    });
  });

  it("rejects a 400 without a file with a ValidationError naming the field", async () => {
    const field = { field: "body.file", message: "is required", rule: "required" };
    const { client } = await uploadServer(400, {
      error: { type: "invalid_request", code: 400, message: "Invalid request", fields: [field] },
    });
    const error = await client.uploadFile(new Uint8Array(0)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).fields).toEqual([field]);
  });

  it("refuses what is not bytes before sending anything, pointing a path to fileFromPath", async () => {
    const { server, client } = await uploadServer();
    await expect(client.uploadFile("./sculpture.png" as never)).rejects.toThrow(
      /not a string \(in Node, pass fileFromPath\(path\) from @refvid\/client\/node\)/,
    );
    await expect(client.uploadFile({ size: 3 } as never)).rejects.toThrow(TypeError);
    await expect(client.uploadFile({ size: 3 } as never).withResponse()).rejects.toThrow(TypeError);
    expect(server.requests).toEqual([]);
  });

  it("gives the upload with its response and request id", async () => {
    const { client } = await uploadServer(201, UPLOAD, { "x-request-id": "req_up" });
    const { data, response, requestId } = await client.uploadFile(new Blob([BYTES])).withResponse();
    expect(data).toEqual(UPLOAD);
    expect(response.status).toBe(201);
    expect(requestId).toBe("req_up");
    expectTypeOf<Awaited<ReturnType<RefvidClient["uploadFile"]>>>().toEqualTypeOf<FileUpload>();
  });
});

describe("contentDisposition", () => {
  it.each([
    ["sculpture.png", 'attachment; filename="sculpture.png"'],
    ["two words.mov", 'attachment; filename="two words.mov"'],
    ["café.jpg", `attachment; filename="cafe.jpg"; filename*=UTF-8''caf%C3%A9.jpg`],
    ["日本.png", `attachment; filename="__.png"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.png`],
    ['say "hi".wav', `attachment; filename="say _hi_.wav"; filename*=UTF-8''say%20%22hi%22.wav`],
    ["back\\slash.gif", `attachment; filename="back_slash.gif"; filename*=UTF-8''back%5Cslash.gif`],
    ["line\r\nbreak.png", `attachment; filename="line__break.png"; filename*=UTF-8''line%0D%0Abreak.png`],
    ["it's (1)*.png", `attachment; filename="it's (1)*.png"`],
    ["ß (2)'*.png", `attachment; filename="_ (2)'*.png"; filename*=UTF-8''%C3%9F%20%282%29%27%2A.png`],
  ])("%j → %s", (name, header) => {
    expect(contentDisposition(name)).toBe(header);
    // Whatever the name, the header is one a Headers object takes (bytes, no line break).
    expect(new Headers({ "content-disposition": header }).get("content-disposition")).toBe(header);
  });
});

describe("deleteUpload", () => {
  it("sends DELETE /v1/files/{file_id} and returns the answer", async () => {
    const server = await startServer((_req, res) =>
      sendJson(res, 200, { file_id: "upload_1", deleted: true }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.deleteUpload("upload_1")).resolves.toEqual({ file_id: "upload_1", deleted: true });
    await client.deleteUpload("upload_a/b");
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "DELETE /v1/files/upload_1",
      "DELETE /v1/files/upload_a%2Fb",
    ]);
  });

  it("rejects with a NotFoundError for an upload that is not the caller's, or gone", async () => {
    const message = "upload_1 is not an upload of this API key's organization and environment.";
    const server = await startServer((_req, res) =>
      sendJson(res, 404, { error: { type: "file_not_found", code: 404, message } }),
    );
    const client = createRefvidClient({ baseUrl: server.baseUrl, apiKey: API_KEY });
    await expect(client.deleteUpload("upload_1")).rejects.toSatisfy(
      (e) => e instanceof NotFoundError && e.type === "file_not_found" && e.message === message,
    );
  });
});
