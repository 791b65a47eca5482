/**
 * Shapes shared by the flag value kinds (`values.ts`, `list_values.ts`,
 * `map_values.ts`). They live apart so that the list and map kinds need not
 * import `values.ts`, which imports them.
 * @module
 */

/** Where a value lives: a getter/setter pair over a config or flags object. */
export interface Slot<T> {
  get(): T | undefined;
  set(value: T): void;
}

/** A `logging.vmodule` item in v1beta1 shape. */
export interface VModuleItem {
  filePattern: string;
  verbosity: number;
}

/** A `reservedMemory` item in v1beta1 shape. */
export interface MemoryReservation {
  numaNode: number;
  limits: Record<string, string>;
}
