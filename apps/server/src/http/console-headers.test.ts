import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.js";
import { consoleHeaders } from "./console-headers.js";

const S3 = {
  REFVID_BLOB_STORE: "s3://refvid-media/prod",
  AWS_REGION: "eu-west-3",
  AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};

/** The console's Content-Security-Policy as directive name -> its sources. */
const policyOf = (env: Record<string, string>) =>
  Object.fromEntries(
    (consoleHeaders(loadConfig({ REFVID_STORE: "memory", ...env }))["Content-Security-Policy"] ?? "")
      .split("; ")
      .map((directive) => {
        const [name, ...sources] = directive.split(" ");
        return [name, sources.join(" ")];
      }),
  );

describe("the console's Content-Security-Policy", () => {
  it.each<[string, Record<string, string>, { img: string; media: string }]>([
    ["files from this origin only", {}, { img: "'self' data:", media: "'self' blob:" }],
    ["an S3 bucket streamed through refvid", S3, { img: "'self' data:", media: "'self' blob:" }],
    [
      "posters and videos presigned by an S3-compatible server",
      { ...S3, REFVID_S3_PRESIGN: "true", REFVID_S3_ENDPOINT: "http://minio.internal:9000/" },
      { img: "'self' data: http://minio.internal:9000", media: "'self' blob: http://minio.internal:9000" },
    ],
    [
      "posters and videos presigned by AWS S3",
      { ...S3, REFVID_S3_PRESIGN: "true" },
      { img: "'self' data: https:", media: "'self' blob: https:" },
    ],
  ])("%s", (_name, env, { img, media }) => {
    expect(policyOf(env)).toMatchObject({ "img-src": img, "media-src": media, "connect-src": "'self'" });
  });
});
