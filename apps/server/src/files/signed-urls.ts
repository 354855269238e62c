/**
 * HMAC-signed, expiring file URLs: `/v1/files/{id}?expires=…&signature=…`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export class FileUrlSigner {
  constructor(
    private readonly secret: string,
    private readonly publicUrl: string,
    private readonly ttlSeconds: number,
  ) {}

  private sign(fileId: string, expires: number): string {
    return createHmac("sha256", this.secret).update(`${fileId}.${expires}`).digest("base64url").slice(0, 43);
  }

  /**
   * A URL valid for at least the TTL. The expiry is rounded up to the hour so that polling the
   * same run returns the same URL for a while (friendlier to caches and to people comparing).
   */
  url(fileId: string, now: Date): string {
    const expires = Math.ceil((now.getTime() / 1000 + this.ttlSeconds) / 3600) * 3600;
    return `${this.publicUrl}/v1/files/${fileId}?expires=${expires}&signature=${this.sign(fileId, expires)}`;
  }

  check(fileId: string, expires: number, signature: string, now: Date): "ok" | "invalid" | "expired" {
    const want = Buffer.from(this.sign(fileId, expires));
    const got = Buffer.from(signature);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return "invalid";
    return expires * 1000 < now.getTime() ? "expired" : "ok";
  }
}
