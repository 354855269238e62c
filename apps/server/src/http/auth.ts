/**
 * Authentication (interface, "Authentication"): `Authorization: Key sk-…` or `Bearer sk-…`.
 * Exactly one space separates scheme and key; the scheme is case-insensitive (RFC 9110, 11.1) and
 * trailing spaces and tabs are dropped as HTTP drops them around any header value, but a tab or a
 * second space inside is refused. Keys are looked up by SHA-256 hash; unknown and revoked keys get
 * `401 unauthorized`. The per-key rate limit runs right after, on every authenticated request.
 * Both run on the headers alone, before any body is read.
 */
import { timingSafeEqual } from "node:crypto";
import { ForbiddenError, RateLimitError, UnauthorizedError } from "@refvid/core";
import type { Actor } from "@refvid/store";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { hashApiKey } from "../services/admin.js";

const SCHEME = /^(Key|Bearer) (\S+)$/i;
const ADMIN_SCHEME = /^Bearer (\S+)$/i;
/** A submit, refused at the rate limit: counted as a rejected run. */
const SUBMIT_PATH = /^\/v1\/run\//;

/** The header value as HTTP reads it: optional whitespace around it is not part of it. */
const credentials = (req: Request) => (req.get("authorization") ?? "").replace(/^[ \t]+|[ \t]+$/g, "");
const HINT = "Send Authorization: Key sk-… or Bearer sk-….";

export function authenticate(deps: AppDeps): RequestHandler {
  return async (req, res, next) => {
    const match = SCHEME.exec(credentials(req));
    const secret = match?.[2];
    if (!secret) return next(new UnauthorizedError(`Missing or malformed API key. ${HINT}`));
    if (!secret.startsWith("sk-")) return next(new UnauthorizedError(`API keys begin with sk-. ${HINT}`));
    const found = await deps.keys.find(hashApiKey(secret));
    if (!found) return next(new UnauthorizedError(`Unknown API key. ${HINT}`));
    if (found.apiKey.revokedAt)
      return next(new UnauthorizedError("This API key was revoked. Ask your operator for a new one."));
    res.locals.caller = found satisfies Caller;

    const key = found.apiKey;
    const rate = await deps.store.countRequest(key.id, key.rateLimitPerMinute, deps.clock.now());
    res.locals.rate = rate;
    const resetSeconds = Math.max(1, Math.ceil(rate.resetMs / 1000));
    res.setHeader("RateLimit-Policy", `"per-key";q=${key.rateLimitPerMinute};w=60`);
    res.setHeader("RateLimit", `"per-key";r=${rate.remaining};t=${resetSeconds}`);
    if (!rate.allowed) {
      const submit = req.method === "POST" && SUBMIT_PATH.test(req.baseUrl + req.path);
      if (submit) deps.metrics.runRejected("rate_limit");
      return next(new RateLimitError(key.rateLimitPerMinute, resetSeconds));
    }
    // The rest of the request waits for the check phase of this turn of the event loop: a busy
    // process first takes in every request the turn brought, then answers them one after another
    // (docs/decisions.md, "Hot path": more requests a second, shorter tails).
    setImmediate(next);
  };
}

export const callerOf = (res: Response): Caller => res.locals.caller as Caller;

/**
 * The admin API: off without an admin token (REFVID_ADMIN_TOKEN, REFVID_ADMIN_TOKENS), else
 * `Authorization: Bearer <token>`; the token's name is the request's actor (`adminActorOf`).
 */
export function authenticateAdmin(deps: AppDeps): RequestHandler {
  const tokens = deps.config.adminTokens.map(({ name, token }) => ({ name, token: Buffer.from(token) }));
  return (req: Request, res: Response, next: NextFunction) => {
    if (tokens.length === 0) {
      return next(
        new ForbiddenError(
          "admin_api_disabled",
          "The admin API is disabled. Start the server with REFVID_ADMIN_TOKEN set to enable it.",
        ),
      );
    }
    const given = Buffer.from(ADMIN_SCHEME.exec(credentials(req))?.[1] ?? "");
    // Every token is compared, so the time taken does not tell which one nearly matched.
    let matched: string | null = null;
    for (const { name, token } of tokens) {
      if (given.length === token.length && timingSafeEqual(given, token)) matched ??= name;
    }
    if (matched === null) {
      return next(
        new UnauthorizedError(
          "Missing or invalid admin token. Send Authorization: Bearer $REFVID_ADMIN_TOKEN.",
        ),
      );
    }
    res.locals.adminName = matched;
    next();
  };
}

/** Who makes an admin request: its token's name, and the request's id. */
export const adminActorOf = (res: Response): Actor => ({
  name: res.locals.adminName as string,
  requestId: res.locals.requestId as string,
});
