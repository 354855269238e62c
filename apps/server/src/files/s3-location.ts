/**
 * Where an S3-compatible bucket is and how to sign for it, from the operator's configuration
 * (`REFVID_BLOB_STORE=s3://bucket/prefix`, the standard AWS variables, `REFVID_S3_ENDPOINT`).
 */
export interface S3Location {
  bucket: string;
  /** Prepended to every key; empty or ending with "/". */
  prefix: string;
  region: string;
  /** An S3-compatible server's URL; unset means AWS itself. */
  endpoint: string | null;
  /** Path-style (`endpoint/bucket/key`) rather than virtual-hosted (`bucket.host/key`) URLs. */
  forcePathStyle: boolean;
  /** From AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; null leaves it to the SDK's default chain. */
  credentials: S3Credentials | null;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** `s3://bucket` or `s3://bucket/some/prefix`; null when the text is not an s3 URL. */
export function parseS3Url(text: string): { bucket: string; prefix: string } | null {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(text);
  if (!match) return null;
  const path = (match[2] ?? "").replace(/^\/+|\/+$/g, "");
  return { bucket: match[1] as string, prefix: path ? `${path}/` : "" };
}

/** The base URL of an object, without query: what a presigned URL signs and a browser fetches. */
export function objectUrl(location: S3Location, key: string): URL {
  const path = key.split("/").map(encodeSigV4).join("/");
  if (location.endpoint) {
    const base = new URL(location.endpoint);
    const root = base.pathname.replace(/\/+$/, "");
    if (location.forcePathStyle) return new URL(`${base.origin}${root}/${location.bucket}/${path}`);
    return new URL(`${base.protocol}//${location.bucket}.${base.host}${root}/${path}`);
  }
  return new URL(`https://${location.bucket}.s3.${location.region}.amazonaws.com/${path}`);
}

/**
 * RFC 3986 unreserved characters stay; everything else is percent-encoded, as SigV4 wants (a key's
 * path segments, query values).
 */
export function encodeSigV4(segment: string): string {
  return encodeURIComponent(segment).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
