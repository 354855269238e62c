/**
 * Page cursors, signed: `<payload>.<HMAC>`, the payload the base64url JSON of the last row's
 * keyset `[created_at, id]`, the HMAC-SHA256 under a key derived from the server's signing secret
 * over the listing's scope (its name and filters) and the payload. Only this server makes one that
 * opens, so a cursor is a position the server handed out, for the listing it was made for. Cursors
 * never expire; they stop opening when the signing secret changes.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Keyset } from "@refvid/store";

/** An instant as `toISOString` writes it in years 0000-9999: a range every store takes. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Ids as refvid makes them: printable ASCII, no spaces, bounded. */
const ID = /^[\x21-\x7e]{1,200}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;

export class PageCursors {
  private readonly key: Buffer;

  constructor(secret: string) {
    // A key of its own, so no cursor's MAC is ever a valid signature of anything else.
    this.key = createHmac("sha256", secret).update("refvid page cursor").digest();
  }

  /** The cursor of the page after `last`, for `scope` only. */
  sign(scope: string, last: Keyset): string {
    const payload = Buffer.from(JSON.stringify([last.createdAt.toISOString(), last.id])).toString(
      "base64url",
    );
    return `${payload}.${this.mac(scope, payload)}`;
  }

  /** The keyset of a cursor this server signed for `scope`; null for anything else. */
  open(scope: string, cursor: string): Keyset | null {
    const [payload, mac, ...extra] = cursor.split(".");
    if (payload === undefined || mac === undefined || extra.length > 0 || !MAC.test(mac)) return null;
    if (!timingSafeEqual(Buffer.from(mac), Buffer.from(this.mac(scope, payload)))) return null;
    // Signed by this server, and checked all the same: a cursor is input.
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      return null;
    }
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [t, id] = value as unknown[];
    if (typeof t !== "string" || typeof id !== "string" || !INSTANT.test(t) || !ID.test(id)) return null;
    const createdAt = new Date(t);
    if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== t) return null;
    return { createdAt, id };
  }

  private mac(scope: string, payload: string): string {
    return createHmac("sha256", this.key).update(`${scope}\0${payload}`).digest("base64url");
  }
}
