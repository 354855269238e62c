import { describe, expect, it } from "vitest";
import { uploadIdOf, uploadUrl } from "./upload-urls.js";

describe("uploadIdOf", () => {
  const id = "upload_abcdefgh12";
  it("knows this server's upload URLs, under a path prefix too, and nothing else", () => {
    for (const publicUrl of ["http://localhost:8080", "https://api.example.com/refvid"]) {
      expect(uploadIdOf(uploadUrl(publicUrl, id), publicUrl)).toBe(id);
      expect(uploadIdOf(uploadUrl("https://elsewhere.example", id), publicUrl)).toBeNull();
      expect(uploadIdOf(`${publicUrl}/v1/files/${id}`, publicUrl)).toBeNull();
      expect(uploadIdOf(`${publicUrl}/v1/files/file_abcdefgh12/content`, publicUrl)).toBeNull();
      expect(uploadIdOf("https://example.com/a.png", publicUrl)).toBeNull();
      expect(uploadIdOf("not a url /v1/files/upload_abcdefgh12/content", publicUrl)).toBeNull();
    }
    // The host's case does not matter; the path's does.
    expect(uploadIdOf(`HTTP://LOCALHOST:8080/v1/files/${id}/content`, "http://localhost:8080")).toBe(id);
    expect(uploadIdOf(`http://localhost:8080/V1/files/${id}/content`, "http://localhost:8080")).toBeNull();
  });
});
