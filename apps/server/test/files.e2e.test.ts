/**
 * Output files end to end: a run's signed video URL served whole, by HEAD and by byte ranges,
 * and refused when tampered with, expired or naming no file.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { D, expectError, keylessRequest, quickD } from "./api-fixtures.js";
import { useTestRefvid } from "./harness.js";

const t = useTestRefvid();
const raw = keylessRequest(t);

describe("files", () => {
  let videoUrl: string;
  let size: number;

  beforeAll(async () => {
    const tenant = await t.tenant();
    const run = await tenant.client.submit(D, quickD(), { sync: true });
    videoUrl = run.output?.videos[0]?.url ?? "";
    expect(videoUrl).toMatch(/\/v1\/files\/[^?]+\?expires=\d+&signature=/);
  });

  it("serves the whole video: 200 video/mp4 starting with an ftyp box", async () => {
    const res = await fetch(videoUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    const bytes = Buffer.from(await res.arrayBuffer());
    size = bytes.length;
    expect(Number(res.headers.get("content-length"))).toBe(size);
    expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect(size).toBeGreaterThan(1000);
  });

  it("HEAD gives the headers without a body", async () => {
    const res = await fetch(videoUrl, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(Number(res.headers.get("content-length"))).toBe(size);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it("serves byte ranges: 206 with Content-Range, suffix ranges, 416 past the end", async () => {
    const whole = Buffer.from(await (await fetch(videoUrl)).arrayBuffer());
    const head = await fetch(videoUrl, { headers: { range: "bytes=0-99" } });
    expect(head.status).toBe(206);
    expect(head.headers.get("content-range")).toBe(`bytes 0-99/${size}`);
    const headBytes = Buffer.from(await head.arrayBuffer());
    expect(headBytes.length).toBe(100);
    expect(headBytes.equals(whole.subarray(0, 100))).toBe(true);

    const tail = await fetch(videoUrl, { headers: { range: "bytes=-50" } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get("content-range")).toBe(`bytes ${size - 50}-${size - 1}/${size}`);
    const tailBytes = Buffer.from(await tail.arrayBuffer());
    expect(tailBytes.equals(whole.subarray(size - 50))).toBe(true);

    const middle = await fetch(videoUrl, { headers: { range: `bytes=100-` } });
    expect(middle.status).toBe(206);
    expect(middle.headers.get("content-range")).toBe(`bytes 100-${size - 1}/${size}`);
    expect((await middle.arrayBuffer()).byteLength).toBe(size - 100);

    const past = await fetch(videoUrl, { headers: { range: `bytes=${size}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${size}`);
    // The error body is JSON and says so (the spec's 416 is application/json).
    expect(past.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await past.json()).toMatchObject({ error: { type: "range_not_satisfiable", code: 416 } });
  });

  it("a tampered or incomplete URL -> 403 invalid_file_signature", async () => {
    const url = new URL(videoUrl);
    const signature = url.searchParams.get("signature") ?? "";
    const flipped = `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
    const tampered = new URL(url);
    tampered.searchParams.set("signature", flipped);
    expectError(await raw("GET", `${tampered.pathname}${tampered.search}`), 403, "invalid_file_signature");
    const otherExpiry = new URL(url);
    otherExpiry.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600));
    expectError(
      await raw("GET", `${otherExpiry.pathname}${otherExpiry.search}`),
      403,
      "invalid_file_signature",
    );
    expectError(await raw("GET", url.pathname), 403, "invalid_file_signature");
    expectError(
      await raw("GET", `${url.pathname}?expires=${url.searchParams.get("expires")}`),
      403,
      "invalid_file_signature",
    );
    expectError(await raw("GET", `${url.pathname}?signature=${signature}`), 403, "invalid_file_signature");
  });

  it("an expired URL -> 403 file_url_expired; a signed URL of no file -> 404 file_not_found", async () => {
    // Neither can be made from outside; the server's own signer makes them, as it would have earlier.
    const fileId = new URL(videoUrl).pathname.split("/").pop() ?? "";
    const signer = t.refvid.deps.signer;
    const expired = new URL(signer.url(fileId, new Date(Date.now() - 3 * 86_400_000)));
    expectError(await raw("GET", `${expired.pathname}${expired.search}`), 403, "file_url_expired");
    const missing = new URL(signer.url("file_00000000000000000000000000000000", new Date()));
    expectError(await raw("GET", `${missing.pathname}${missing.search}`), 404, "file_not_found");
  });
});
