/**
 * A reference file sent to `POST /v1/files` as `multipart/form-data`, its progress reported as it
 * goes: fetch cannot report an upload's progress, XMLHttpRequest can. A refusal is the client's
 * typed error (`errorFromResponse`), as from any other call, so it is described the same way.
 */
import { errorFromResponse, type FileUpload, type Model } from "@refvid/client";

export interface UploadProgress {
  loaded: number;
  total: number;
}

export interface UploadOptions {
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

/** Uploads `file` with `apiKey` to the refvid at `baseUrl`. */
export function uploadReference(
  baseUrl: string,
  apiKey: string,
  file: File,
  { onProgress, signal }: UploadOptions = {},
): Promise<FileUpload> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${baseUrl}/v1/files`);
    xhr.setRequestHeader("Authorization", `Key ${apiKey}`);
    xhr.upload.onprogress = (e) =>
      onProgress?.({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      const body = jsonOf(xhr.responseText);
      if (xhr.status === 201 && body) return resolve(body as FileUpload);
      const response = new Response(null, {
        status: xhr.status,
        statusText: xhr.statusText,
        headers: headersOf(xhr),
      });
      reject(errorFromResponse(response, body ?? xhr.responseText));
    };
    xhr.onerror = () =>
      reject(new Error(`The upload of ${file.name} stopped: the connection to refvid closed. Try again.`));
    xhr.onabort = () => reject(signal?.reason ?? new DOMException("The upload was cancelled.", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The response's headers (`Retry-After` and `X-Request-Id` are the ones an error reads). */
function headersOf(xhr: XMLHttpRequest): Headers {
  const headers = new Headers();
  for (const line of xhr.getAllResponseHeaders().split(/\r?\n/)) {
    const at = line.indexOf(":");
    if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return headers;
}

/** What the model says of the files a field of URLs takes: their kind and largest size. */
export function referenceOf(
  model: Model,
  field: string,
): { kind: string | undefined; maxBytes: number | undefined } {
  const limits = model.limits?.references.find((r) => r.field === field);
  return { kind: limits?.kind, maxBytes: limits?.max_bytes };
}

/** A size in words, in units of 1,024 as refvid's limits are: `740 B`, `12.5 kB`, `30 MB`. */
export function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [value, unit] = bytes < 1024 ** 2 ? [bytes / 1024, "kB"] : [bytes / 1024 ** 2, "MB"];
  return `${Number(value.toFixed(1))} ${unit}`;
}
