import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadOpenapiDocument, openapiDocumentPath } from "./document.js";
import { TERMINAL_STATUSES } from "./index.js";

describe("@refvid/api-types/document", () => {
  it("points at the bundled document", () => {
    expect(existsSync(openapiDocumentPath)).toBe(true);
    expect(loadOpenapiDocument().openapi).toBe("3.1.0");
  });

  it("hands out an independent copy each time, so one consumer cannot change another's", () => {
    const first = loadOpenapiDocument();
    first.paths = {};
    expect(Object.keys(loadOpenapiDocument().paths).length).toBeGreaterThan(10);
  });

  it("lists as terminal exactly the statuses that are not in flight", () => {
    const schemas = loadOpenapiDocument().components.schemas as Record<string, { enum: string[] }>;
    const statuses = schemas.RunStatus?.enum ?? [];
    expect([...TERMINAL_STATUSES]).toEqual(statuses.filter((s) => s !== "queued" && s !== "processing"));
  });
});
