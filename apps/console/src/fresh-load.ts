/** A section's data loaded afresh with the page, a slow answer never put over a newer one. */
import { useEffect, useState } from "react";

/**
 * Calls `load` when it changes (make it with useCallback) or `generation` moves, once `generation`
 * is past 0 (the page's first load), and hands its result to `apply`. A load overtaken by a newer
 * one, or by the component going away, is dropped. Says whether a load is under way and why the
 * last one failed.
 */
export function useFreshLoad<T>(
  load: () => Promise<T>,
  apply: (result: T) => void,
  generation: number,
): { busy: boolean; error: unknown } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (generation === 0) return;
    let current = true;
    setError(undefined);
    setBusy(true);
    load()
      .then(
        (result) => {
          if (current) apply(result);
        },
        (e: unknown) => {
          if (current) setError(e);
        },
      )
      .finally(() => {
        if (current) setBusy(false);
      });
    return () => {
      current = false;
    };
  }, [load, apply, generation]);
  return { busy, error };
}
