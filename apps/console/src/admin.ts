/** Shared by the operator's pages: the admin API has no helpers in @refvid/client, only its raw typed `api`. */
import { errorFromResponse } from "@refvid/client";

/** The data of an openapi-fetch result, or the typed error its response stands for. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw errorFromResponse(response, error);
  return data;
}
