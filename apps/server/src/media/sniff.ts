/**
 * What a file really is, from its first bytes (magic numbers), whatever its URL or Content-Type
 * claims. Covers the formats the interface names: JPG, PNG, WebP, BMP, TIFF, GIF, HEIC, HEIF;
 * MP4, MOV; MP3, WAV.
 */
import { open } from "node:fs/promises";

export type MediaFormat =
  | "jpeg"
  | "png"
  | "webp"
  | "bmp"
  | "tiff"
  | "gif"
  | "heic"
  | "heif"
  | "mp4"
  | "mov"
  | "mp3"
  | "wav";

/** Enough of the start of a file to tell every format `sniffFormat` knows. */
export const SNIFF_BYTES = 64;

const ascii = (b: Buffer, start: number, end: number) => b.subarray(start, end).toString("latin1");

export function sniffFormat(head: Buffer): MediaFormat | null {
  if (head.length < 12) return null;
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (ascii(head, 0, 4) === "RIFF" && ascii(head, 8, 12) === "WEBP") return "webp";
  if (ascii(head, 0, 4) === "RIFF" && ascii(head, 8, 12) === "WAVE") return "wav";
  if (ascii(head, 0, 2) === "BM") return "bmp";
  if (ascii(head, 0, 4) === "II*\u0000" || ascii(head, 0, 4) === "MM\u0000*") return "tiff";
  if (ascii(head, 0, 6) === "GIF87a" || ascii(head, 0, 6) === "GIF89a") return "gif";
  if (
    ascii(head, 0, 3) === "ID3" ||
    (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0 && ((head[1] ?? 0) & 0x06) !== 0)
  )
    return "mp3";
  if (ascii(head, 4, 8) === "ftyp") {
    const brand = ascii(head, 8, 12);
    if (["heic", "heix", "hevc", "hevx", "heim", "heis"].includes(brand)) return "heic";
    if (["mif1", "msf1", "heif"].includes(brand)) return "heif";
    if (brand === "qt  ") return "mov";
    return "mp4";
  }
  if (["moov", "mdat", "wide", "free", "skip"].includes(ascii(head, 4, 8))) return "mov";
  return null;
}

/** The catalog's format names for what `sniffFormat` finds (heif covers HEIC's family too). */
export function matchesAllowed(format: MediaFormat, allowed: readonly string[]): boolean {
  return allowed.includes(format) || (format === "heic" && allowed.includes("heif"));
}

/** The format of a file on disk, from its first `SNIFF_BYTES`. */
export async function sniffFile(path: string): Promise<MediaFormat | null> {
  const file = await open(path, "r");
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    return sniffFormat(buffer.subarray(0, bytesRead));
  } finally {
    await file.close();
  }
}
