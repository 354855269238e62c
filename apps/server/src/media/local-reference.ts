/** A reference file the media preflight downloaded and identified, as providers receive it. */
import type { ReferenceKind } from "@refvid/core";
import type { MediaFormat } from "./sniff.js";

export interface LocalReference {
  kind: ReferenceKind;
  url: string;
  path: string;
  format: MediaFormat;
  bytes: number;
  /** For video and audio. */
  durationSeconds?: number;
}
