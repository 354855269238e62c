/**
 * Reference uploads as references: an upload's `url` (`{publicUrl}/v1/files/{id}/content`) may
 * stand in any `*_urls` field of a run of the same organization and environment. Submit checks
 * each one (404 naming the field otherwise); the media preflight reads it from the blob store,
 * never over the network; a vendor gets a signed URL it can fetch instead.
 */

import type { Readable } from "node:stream";
import type { Environment, ModelDefinition } from "@refvid/core";
import type { Store, UploadRecord } from "@refvid/store";
import type { Clock } from "../clock.js";
import type { BlobStore } from "./blob-store.js";
import type { FileUrlSigner } from "./signed-urls.js";

/** What recognising upload URLs needs (the app's dependencies have it). */
interface UploadUrlDeps {
  config: { publicUrl: string };
  clock: Clock;
}

/** What reading a run's upload needs. */
export interface UploadReadDeps extends UploadUrlDeps {
  store: Pick<Store, "getUpload">;
  blobs: Pick<BlobStore, "read">;
}

/** What signing upload URLs for a vendor needs. */
export interface UploadSignDeps extends UploadUrlDeps {
  signer: Pick<FileUrlSigner, "url">;
}

const UPLOAD_PATH = /^\/v1\/files\/(upload_[A-Za-z0-9_-]{8,100})\/content$/;

/** Where an upload can be read with the owner's API key, and used as a reference. */
export function uploadUrl(publicUrl: string, id: string): string {
  return `${publicUrl}/v1/files/${id}/content`;
}

let base: { publicUrl: string; origin: string; root: string } | undefined;

/** The upload id when `url` is one of this server's upload URLs, else null. */
export function uploadIdOf(url: string, publicUrl: string): string | null {
  // Every submit's references come through here: most are not uploads, and need no parsing.
  if (!url.includes("/v1/files/upload_")) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (base?.publicUrl !== publicUrl) {
    const { origin, pathname } = new URL(publicUrl);
    base = { publicUrl, origin, root: pathname.replace(/\/+$/, "") };
  }
  const { root } = base;
  if (parsed.origin !== base.origin || !parsed.pathname.startsWith(`${root}/`)) return null;
  return UPLOAD_PATH.exec(parsed.pathname.slice(root.length))?.[1] ?? null;
}

/** Why an upload cannot be used now (`Upload x …`), or null when it can. */
export function uploadProblem(upload: UploadRecord | null, now: Date): string | null {
  if (!upload) return "does not exist for this API key's organization and environment";
  if (upload.expiresAt <= now) return `expired at ${upload.expiresAt.toISOString()}; upload the file again`;
  return null;
}

/**
 * The input a model vendor is sent: upload URLs (which need the owner's API key) become signed
 * URLs the vendor can fetch, valid for the file URL TTL.
 */
export function vendorReadableInput(
  deps: UploadSignDeps,
  model: Pick<ModelDefinition, "referenceFields">,
  input: Record<string, unknown>,
): Record<string, unknown> {
  const now = deps.clock.now();
  const copy: Record<string, unknown> = { ...input };
  for (const field of Object.values(model.referenceFields)) {
    const value = copy[field];
    if (!Array.isArray(value)) continue;
    copy[field] = value.map((url) => {
      const id = typeof url === "string" ? uploadIdOf(url, deps.config.publicUrl) : null;
      return id ? deps.signer.url(id, now) : url;
    });
  }
  return copy;
}

/**
 * For the media preflight: an upload a run names, read from the blob store; null when `url` is
 * not an upload URL. Throws, saying why, for an upload the run's organization and environment may
 * not use (it may have expired since the submit).
 */
export async function openUploadForRun(
  deps: UploadReadDeps,
  run: { organizationId: string; environment: Environment },
  url: string,
): Promise<{ bytes: number; read: () => Promise<Readable> } | null> {
  const id = uploadIdOf(url, deps.config.publicUrl);
  if (!id) return null;
  const upload = await deps.store.getUpload({
    organizationId: run.organizationId,
    environment: run.environment,
    id,
  });
  const problem = uploadProblem(upload, deps.clock.now());
  if (problem || !upload) throw new Error(`upload ${id} ${problem}`);
  return { bytes: upload.bytes, read: () => deps.blobs.read(id) };
}
