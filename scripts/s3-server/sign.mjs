/**
 * SigV4 headers for one bodiless request (`GET /` lists buckets, `PUT /name` creates one): how the
 * start script knows the server answers S3 requests with these keys. https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
import { createHash, createHmac } from "node:crypto";

const hash = (text) => createHash("sha256").update(text).digest("hex");
const hmac = (key, text) => createHmac("sha256", key).update(text).digest();

export function signedHeaders(
  { endpoint, region, accessKeyId, secretAccessKey },
  { method = "GET", path = "/" } = {},
  now = new Date(),
) {
  const host = new URL(endpoint).host;
  const datetime = now.toISOString().replace(/[-:]|\.\d{3}/g, "");
  const day = datetime.slice(0, 8);
  const payload = hash("");
  const headers = { host, "x-amz-content-sha256": payload, "x-amz-date": datetime };
  const names = Object.keys(headers).sort();
  const canonical = [
    method,
    path,
    "",
    ...names.map((n) => `${n}:${headers[n]}`),
    "",
    names.join(";"),
    payload,
  ].join("\n");
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", datetime, scope, hash(canonical)].join("\n");
  let key = hmac(`AWS4${secretAccessKey}`, day);
  for (const part of [region, "s3", "aws4_request"]) key = hmac(key, part);
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  return {
    "x-amz-content-sha256": payload,
    "x-amz-date": datetime,
    authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope}, SignedHeaders=${names.join(";")}, Signature=${signature}`,
  };
}
