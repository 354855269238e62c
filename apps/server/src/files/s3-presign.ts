/**
 * S3 presigned GET URLs (AWS Signature Version 4, query-string form), computed synchronously.
 *
 * Hand-written rather than the SDK's `getSignedUrl` because that one is async (its hash and
 * credential interfaces are), and a run's file URL is rendered wherever a Run is: inside the
 * admission transaction, in search pages, in webhook bodies. Keeping `toApiRun` synchronous keeps
 * those paths as they are. `s3-presign.test.ts` checks that the URLs are exactly the SDK's, and the
 * S3 end-to-end test fetches them from a real server.
 * https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 */
import { createHash, createHmac } from "node:crypto";
import { encodeSigV4, objectUrl, type S3Credentials, type S3Location } from "./s3-location.js";

/** SigV4 allows presigned URLs to live at most seven days. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const hmac = (key: string | Buffer, text: string) => createHmac("sha256", key).update(text).digest();

/** `20261124T063000Z` */
function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]|\.\d{3}/g, "");
}

/**
 * A GET URL for `key`, signed at `signedAt` and valid for `expiresInSeconds` after it (at most
 * seven days). Signed with the same query parameters the SDK sends (`x-id=GetObject`, `X-Amz-Content-Sha256`).
 */
export function presignGetObject(
  location: S3Location,
  credentials: S3Credentials,
  key: string,
  signedAt: Date,
  expiresInSeconds: number,
): string {
  if (!(expiresInSeconds >= 1 && expiresInSeconds <= MAX_PRESIGN_SECONDS)) {
    throw new RangeError(`a presigned URL lives 1 s to 7 days, not ${expiresInSeconds} s`);
  }
  const url = objectUrl(location, key);
  const datetime = amzDate(signedAt);
  const day = datetime.slice(0, 8);
  const scope = `${day}/${location.region}/s3/aws4_request`;
  const params: [string, string][] = [
    ["X-Amz-Algorithm", "AWS4-HMAC-SHA256"],
    ["X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD"],
    ["X-Amz-Credential", `${credentials.accessKeyId}/${scope}`],
    ["X-Amz-Date", datetime],
    ["X-Amz-Expires", String(expiresInSeconds)],
    ["X-Amz-SignedHeaders", "host"],
    ["x-id", "GetObject"],
  ];
  if (credentials.sessionToken) params.push(["X-Amz-Security-Token", credentials.sessionToken]);
  const query = params
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeSigV4(value)}`)
    .join("&");
  const canonicalRequest = [
    "GET",
    url.pathname,
    query,
    `host:${url.host}\n`,
    "host",
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", datetime, scope, sha256(canonicalRequest)].join("\n");
  let signingKey = hmac(`AWS4${credentials.secretAccessKey}`, day);
  for (const part of [location.region, "s3", "aws4_request"]) signingKey = hmac(signingKey, part);
  const signature = createHmac("sha256", signingKey).update(stringToSign).digest("hex");
  return `${url.origin}${url.pathname}?${query}&X-Amz-Signature=${signature}`;
}
