/**
 * Expiring file URLs: refvid's own HMAC-signed `/v1/files/{id}?expires=…&signature=…`, or, with
 * `REFVID_S3_PRESIGN`, S3 presigned GET URLs that expire on the same schedule.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Signs a GET of blob `id`, as of `signedAt`, valid for `expiresInSeconds` (S3 presigning). */
export type Presign = (id: string, signedAt: Date, expiresInSeconds: number) => string;

/** URLs kept for reuse: a run polled within the hour gets the same URL, so it is signed once. */
const MAX_CACHED_URLS = 10_000;

export class FileUrlSigner {
  private readonly urls = new Map<string, string>();

  constructor(
    private readonly secret: string,
    private readonly publicUrl: string,
    private readonly ttlSeconds: number,
    private readonly presign: Presign | null = null,
  ) {}

  private sign(fileId: string, expires: number): string {
    return createHmac("sha256", this.secret).update(`${fileId}.${expires}`).digest("base64url").slice(0, 43);
  }

  /**
   * A URL valid for at least the TTL. The expiry is rounded up to the hour so that polling the
   * same run returns the same URL for a while (friendlier to caches and to people comparing); a
   * presigned URL is signed as of the start of the hour for the same reason.
   */
  url(fileId: string, now: Date): string {
    const expires = Math.ceil((now.getTime() / 1000 + this.ttlSeconds) / 3600) * 3600;
    const signedAt = Math.floor(now.getTime() / 1000 / 3600) * 3600;
    const key = `${fileId} ${expires} ${signedAt}`;
    let url = this.urls.get(key);
    if (url === undefined) {
      url = this.presign
        ? this.presign(fileId, new Date(signedAt * 1000), expires - signedAt)
        : this.signedUrl(fileId, expires);
      if (this.urls.size >= MAX_CACHED_URLS) this.urls.clear();
      this.urls.set(key, url);
    }
    return url;
  }

  /** refvid's own URL for a blob, valid until `expires` (Unix seconds). */
  signedUrl(fileId: string, expires: number): string {
    return `${this.publicUrl}/v1/files/${fileId}?expires=${expires}&signature=${this.sign(fileId, expires)}`;
  }

  check(fileId: string, expires: number, signature: string, now: Date): "ok" | "invalid" | "expired" {
    const want = Buffer.from(this.sign(fileId, expires));
    const got = Buffer.from(signature);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return "invalid";
    return expires * 1000 < now.getTime() ? "expired" : "ok";
  }
}
