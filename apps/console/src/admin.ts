/** Shared by the operator's pages: the admin API has no helpers in @refvid/client, only its raw typed `api`. */
import { errorFromResponse } from "@refvid/client";
import { useCallback, useEffect, useState } from "react";

/** The data of an openapi-fetch result, or the typed error its response stands for. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw errorFromResponse(response, error);
  return data;
}

/**
 * What `load` resolves with: loaded when `load` changes (make it with useCallback) and again on
 * `reload`. A failure goes to `onError` and leaves the data as it was.
 */
export function useLoaded<T>(
  load: () => Promise<T>,
  onError: (error: unknown) => void,
): { data: T | undefined; reload: () => Promise<void> } {
  const [data, setData] = useState<T>();
  const reload = useCallback(async () => {
    try {
      setData(await load());
    } catch (e) {
      onError(e);
    }
  }, [load, onError]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, reload };
}

/** A time as the operator's pages show it, in the browser's locale. */
export const date = (iso: string): string => new Date(iso).toLocaleString();
