/** A deep copy: MemoryStore never hands out, nor keeps, a record a caller can mutate. */
export const copy = <V>(value: V): V => structuredClone(value);
