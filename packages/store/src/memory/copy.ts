/**
 * A deep copy: MemoryStore never hands out, nor keeps, a record a caller can mutate. Records are
 * plain objects, arrays, dates and primitives, which this copies about five times faster than
 * `structuredClone` (a poll copies its run once); anything else goes to `structuredClone`.
 */
export const copy = <V>(value: V): V => copyValue(value) as V;

function copyValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) return value.map(copyValue);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const copied = copyValue((value as Record<string, unknown>)[key]);
    // A key named __proto__ (JSON.parse makes one from user input) must stay a key.
    if (key === "__proto__")
      Object.defineProperty(out, key, {
        value: copied,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = copied;
  }
  return out;
}
