/**
 * The URL a vendor posts a run's webhooks to: `{public URL}/v1/vendor-hooks/{route}/{run id}/{token}`,
 * the token an HMAC of route and run under the service's signing secret. A vendor that does not
 * sign its webhooks (Cog) is trusted by the token alone; the others' signatures are checked too.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export class VendorHookUrls {
  constructor(
    private readonly secret: string,
    private readonly publicUrl: string,
  ) {}

  url(route: string, runId: string): string {
    return `${this.publicUrl}/v1/vendor-hooks/${encodeURIComponent(route)}/${encodeURIComponent(runId)}/${this.token(route, runId)}`;
  }

  /** Whether `token` is the one this service gave the vendor for the route's job of the run. */
  verify(route: string, runId: string, token: string): boolean {
    const expected = Buffer.from(this.token(route, runId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private token(route: string, runId: string): string {
    return createHmac("sha256", this.secret).update(`vendor-hook\0${route}\0${runId}`).digest("base64url");
  }
}
