/**
 * Helpers of the upload end-to-end tests: the sample image, the spec's schemas for the answers the
 * upload route gives before the OpenAPI validator sees them, a body sent slowly, and what the
 * process holds open.
 */
import { readdir, readlink } from "node:fs/promises";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";

/** The sample reference image (docs/examples/refs), a PNG. */
export const SCULPTURE = fileURLToPath(new URL("../../../docs/examples/refs/sculpture.png", import.meta.url));

/**
 * The upload route answers before the OpenAPI validator (it streams its body), so its answers are
 * checked against the spec's schemas here.
 */
export function specSchema(name: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: "doc", components: loadOpenapiDocument().components });
  // Compiled at the first check, so a file that names a schema loads even where the spec lacks it.
  let validate: ValidateFunction | undefined;
  return (value: unknown) => {
    validate ??= ajv.compile({ $ref: `doc#/components/schemas/${name}` });
    expect(validate(value), ajv.errorsText(validate.errors)).toBe(true);
  };
}

/** What this process (the server runs in it) holds open: the targets of /proc/self/fd. */
export async function openFiles(): Promise<string[]> {
  const fds = await readdir("/proc/self/fd");
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => null)));
  return targets.filter((target): target is string => target !== null);
}

/**
 * POSTs `first` then `moreMiB` MiB more, one MiB at a time, and returns the answer as soon as it
 * arrives, whether or not the server read the whole body (it hangs up after an early answer).
 */
export function sendSlowly(
  url: string,
  headers: Record<string, string>,
  first: Buffer,
  moreMiB: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // A connection of its own (never pooled), dropped once the answer is in: the server hangs up
    // on the rest of the body, and a write racing that must not fail on a socket nobody watches.
    const req = request(url, { method: "POST", headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body });
        req.destroy();
      });
    });
    req.on("error", reject);
    let sent = 0;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const next = () => {
      if (req.destroyed) return;
      if (sent === 0) req.write(first);
      else if (sent > moreMiB) return req.end();
      else req.write(chunk);
      sent++;
      setImmediate(next);
    };
    next();
  });
}
