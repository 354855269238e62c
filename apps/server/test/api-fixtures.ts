/**
 * What the endpoint suites share: the four models' slugs, inputs that end at once or take long,
 * raw HTTP without a key, and the shape of every error the service defines.
 */
import { expect } from "vitest";
import { rawRequest, type TestRefvid } from "./harness.js";

export const A = "lab-a/model-a/reference-to-video" as const;
export const B = "lab-b/model-b/reference-to-video" as const;
export const C = "lab-c/model-c/reference-to-video" as const;
export const D = "lab-d/model-d/reference-to-video" as const;
export const IMAGES = ["https://example.com/ref.png"];
export const VIDEOS = ["https://example.com/ref.mp4"];
export const fast = (text = "a lighthouse at dusk") => `[simulate:delay=0] ${text}`;
export const slow = (text = "a slow one") => `[simulate:delay=20000] ${text}`;
export const quickD = (prompt = fast()) => ({ prompt, image_urls: IMAGES, duration: "4s" as const });
/** For tenants that poll a lot: the default 120 requests a minute would end the test early. */
export const BUSY = { rateLimitPerMinute: 100_000 };

/** Raw HTTP to `t` without the tenant's key (or with any Authorization given), or to `options.base`. */
export const keylessRequest =
  (t: TestRefvid) =>
  (
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: unknown; base?: string } = {},
  ) =>
    rawRequest(options.base ?? t.url, method, path, options);

/** The shape of every error this service defines. */
export function expectError(res: { status: number; body: any }, status: number, type: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: { type, code: status, message: expect.any(String) } });
  expect(res.body.error.message.length).toBeGreaterThan(0);
}

/** An `invalid_request` naming `field` among its problems, for `rule` when given. */
export function expectInvalid(res: { status: number; body: any }, field: string, rule?: string) {
  expectError(res, 400, "invalid_request");
  expect(res.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
  if (rule) expect(res.body.error.fields).toContainEqual(expect.objectContaining({ field, rule }));
}
