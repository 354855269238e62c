import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { describe, expect, it } from "vitest";
import type { S3Credentials, S3Location } from "./s3-location.js";
import { presignGetObject } from "./s3-presign.js";

const keys: S3Credentials = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
};
const at = new Date("2026-11-24T06:00:00Z");

const cases: [string, { location: S3Location; credentials: S3Credentials; key: string; seconds: number }][] =
  [
    [
      "path-style on an S3-compatible server with a port",
      {
        location: {
          bucket: "refvid",
          prefix: "",
          region: "us-east-1",
          endpoint: "http://127.0.0.1:9000",
          forcePathStyle: true,
          credentials: keys,
        },
        credentials: keys,
        key: "videos/file_6a1f0c9e7b2d4e58",
        seconds: 90_000,
      },
    ],
    [
      "virtual-hosted on AWS, in another region",
      {
        location: {
          bucket: "acme-media",
          prefix: "refvid/",
          region: "eu-west-3",
          endpoint: null,
          forcePathStyle: false,
          credentials: keys,
        },
        credentials: keys,
        key: "refvid/upload_AbC-_9z",
        seconds: 3600,
      },
    ],
    [
      "temporary credentials, the longest lifetime, a key needing escapes",
      {
        location: {
          bucket: "b-1",
          prefix: "a b/",
          region: "us-west-2",
          endpoint: "https://s3.example.com/base",
          forcePathStyle: true,
          credentials: keys,
        },
        credentials: { ...keys, sessionToken: "FwoGZXIvYXdzE+token/with=chars" },
        key: "a b/ünï(code)*!'~.file",
        seconds: 604_800,
      },
    ],
  ];

describe("presignGetObject", () => {
  it.each(cases)(
    "signs exactly as the AWS SDK does: %s",
    async (_name, { location, credentials, key, seconds }) => {
      const client = new S3Client({
        region: location.region,
        ...(location.endpoint ? { endpoint: location.endpoint } : {}),
        forcePathStyle: location.forcePathStyle,
        credentials,
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      });
      const sdk = new URL(
        await getSignedUrl(client, new GetObjectCommand({ Bucket: location.bucket, Key: key }), {
          expiresIn: seconds,
          signingDate: at,
        }),
      );
      const ours = new URL(presignGetObject(location, credentials, key, at, seconds));
      expect(ours.origin + ours.pathname).toBe(sdk.origin + sdk.pathname);
      expect(Object.fromEntries(ours.searchParams)).toEqual(Object.fromEntries(sdk.searchParams));
    },
  );

  it("refuses lifetimes S3 does not accept", () => {
    const [, { location, credentials }] = cases[0] as (typeof cases)[number];
    expect(() => presignGetObject(location, credentials, "k", at, 604_801)).toThrow(/1 s to 7 days/);
    expect(() => presignGetObject(location, credentials, "k", at, 0)).toThrow(/1 s to 7 days/);
  });
});
