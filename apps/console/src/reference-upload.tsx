/**
 * Upload for a field of reference URLs: choose files or drop them on the box; each is sent to
 * `POST /v1/files` with its progress shown, and the URL it gets is added to the field. A refusal
 * (a format refvid does not read, too large, over the quota) is said next to the file's name.
 */
import type { FileUpload } from "@refvid/client";
import { type DragEvent, useEffect, useRef, useState } from "react";
import { describeError } from "./errors.js";
import { sizeOf, type UploadOptions } from "./upload.js";

export type UploadFile = (file: File, options: UploadOptions) => Promise<FileUpload>;

interface Upload {
  key: number;
  name: string;
  loaded: number;
  total: number;
  state: "uploading" | "added" | "failed";
  error?: unknown;
  expiresAt?: string;
}

const NOUNS: Record<string, string> = { image: "images", video: "videos", audio: "audio" };

const hasFiles = (event: DragEvent) => event.dataTransfer.types.includes("Files");

export function ReferenceUpload(props: {
  field: string;
  /** `image`, `video` or `audio`, when the model says which the field takes. */
  kind: string | undefined;
  maxBytes: number | undefined;
  upload: UploadFile;
  onUploaded: (url: string) => void;
}) {
  const { field, kind, maxBytes, upload, onUploaded } = props;
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [dragging, setDragging] = useState(false);
  const nextKey = useRef(0);
  const controllers = useRef(new Map<number, AbortController>());
  useEffect(() => {
    const running = controllers.current;
    return () => {
      for (const controller of running.values()) controller.abort();
    };
  }, []);
  const id = `upload-${field}`;
  const noun = (kind && NOUNS[kind]) ?? `files for ${field}`;

  const send = async (file: File) => {
    const key = nextKey.current++;
    const patch = (change: Partial<Upload>) =>
      setUploads((list) => list.map((u) => (u.key === key ? { ...u, ...change } : u)));
    const remove = () => setUploads((list) => list.filter((u) => u.key !== key));
    setUploads((list) => [
      ...list,
      { key, name: file.name, loaded: 0, total: file.size, state: "uploading" },
    ]);
    if (maxBytes !== undefined && file.size > maxBytes) {
      const error = new Error(
        `${sizeOf(file.size)} is more than ${field} takes (up to ${sizeOf(maxBytes)}).`,
      );
      patch({ state: "failed", error });
      return;
    }
    const controller = new AbortController();
    controllers.current.set(key, controller);
    try {
      const uploaded = await upload(file, {
        signal: controller.signal,
        onProgress: ({ loaded, total }) => patch({ loaded, total }),
      });
      onUploaded(uploaded.url);
      patch({
        state: "added",
        loaded: uploaded.bytes,
        total: uploaded.bytes,
        expiresAt: uploaded.expires_at,
      });
    } catch (error) {
      if (controller.signal.aborted) remove();
      else patch({ state: "failed", error });
    } finally {
      controllers.current.delete(key);
    }
  };
  const sendAll = (files: FileList | null) => {
    for (const file of files ?? []) void send(file);
  };

  return (
    <fieldset
      className="upload"
      data-dragging={dragging || undefined}
      onDragOver={(e) => {
        if (!hasFiles(e)) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        sendAll(e.dataTransfer.files);
      }}
    >
      <legend id={`${id}-legend`}>Upload {noun}</legend>
      <input
        id={id}
        aria-labelledby={`${id}-legend`}
        type="file"
        multiple
        accept={kind ? `${kind}/*` : "image/*,video/*,audio/*"}
        aria-describedby={`${id}-help`}
        onChange={(e) => {
          sendAll(e.target.files);
          e.target.value = "";
        }}
      />
      <p className="help" id={`${id}-help`}>
        Or drop them here. Each is uploaded to refvid and its URL added above.
      </p>
      {uploads.length > 0 ? (
        <ul className="uploads" aria-label={`Uploads for ${field}`}>
          {uploads.map((u) => (
            <UploadItem
              key={u.key}
              upload={u}
              onCancel={() => controllers.current.get(u.key)?.abort()}
              onDismiss={() => setUploads((list) => list.filter((x) => x.key !== u.key))}
            />
          ))}
        </ul>
      ) : null}
    </fieldset>
  );
}

function UploadItem(props: { upload: Upload; onCancel: () => void; onDismiss: () => void }) {
  const { upload: u, onCancel, onDismiss } = props;
  const percent = u.total > 0 ? Math.floor((u.loaded / u.total) * 100) : 0;
  return (
    <li data-state={u.state}>
      <span className="upload-name" title={u.name}>
        {u.name}
      </span>
      {u.state === "uploading" ? (
        <>
          <progress max={u.total || 1} value={u.loaded} aria-label={`Uploading ${u.name}`} />
          <span>
            {percent} % of {sizeOf(u.total)}
          </span>
          <button type="button" className="link" onClick={onCancel}>
            Cancel
          </button>
        </>
      ) : u.state === "added" ? (
        <span role="status">
          added ({sizeOf(u.total)}
          {u.expiresAt ? `, kept until ${new Date(u.expiresAt).toLocaleString()}` : ""})
        </span>
      ) : (
        <>
          <span className="error" role="alert">
            Not uploaded: {describeError(u.error)}
          </span>
          <button type="button" className="link" onClick={onDismiss}>
            Dismiss
          </button>
        </>
      )}
    </li>
  );
}
