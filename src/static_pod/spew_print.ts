/**
 * The text upstream's `hash.DeepHashObject` feeds to the hash: spew's `%#v` print of a Go value
 * (apimachinery `dump.ForHash`: methods disabled, map keys sorted, no pointer addresses). Values
 * are Go trees as built by `core_pod.ts`: structs are objects keyed by Go field name, pointers
 * are `null` (nil) or their target, slices and maps `null` (nil) or arrays/objects, int64s may
 * be bigints. A missing field or element is the type's zero value.
 *
 * @module
 */

import { goType } from "./go_type.ts";

/** spew's `%#v` print of `value` typed `typeName` (a key of the Go type table). */
export function spewPrint(typeName: string, value: unknown): string {
  const out: string[] = [];
  print(typeName, value, false, out);
  return out.join("");
}

const INTEGER_KINDS = new Set([
  "int",
  "int8",
  "int16",
  "int32",
  "int64",
  "uint",
  "uint8",
  "uint16",
  "uint32",
  "uint64",
  "uintptr",
]);

function print(
  typeName: string,
  value: unknown,
  ignoreType: boolean,
  out: string[],
): void {
  const t = goType(typeName);
  if (t.kind === "ptr") {
    if (value === null || value === undefined) {
      out.push(ignoreType ? "<nil>" : `(${typeName})<nil>`);
      return;
    }
    // Multi-level pointers do not occur in the pod types.
    out.push(ignoreType ? "<*>" : `(${typeName})`);
    print(t.elem!, value, true, out);
    return;
  }
  if (!ignoreType) out.push(`(${typeName})`);
  if (t.kind === "bool") {
    out.push(value === true ? "true" : "false");
  } else if (INTEGER_KINDS.has(t.kind)) {
    out.push(String(value ?? 0));
  } else if (t.kind === "string") {
    out.push(typeof value === "string" ? value : "");
  } else if (t.kind === "slice") {
    if (value === null || value === undefined) {
      out.push("<nil>");
      return;
    }
    out.push("[");
    (value as unknown[]).forEach((item, i) => {
      if (i > 0) out.push(" ");
      print(t.elem!, item, true, out);
    });
    out.push("]");
  } else if (t.kind === "map") {
    if (value === null || value === undefined) {
      out.push("<nil>");
      return;
    }
    const record = value as Record<string, unknown>;
    out.push("map[");
    sortedKeys(record).forEach((key, i) => {
      if (i > 0) out.push(" ");
      print(t.key!, key, true, out);
      out.push(":");
      print(t.elem!, record[key], true, out);
    });
    out.push("]");
  } else if (t.kind === "struct") {
    const record = (value ?? {}) as Record<string, unknown>;
    out.push("{");
    t.fields!.forEach((f, i) => {
      if (i > 0) out.push(" ");
      out.push(`${f.name}:`);
      print(f.type, record[f.name], false, out);
    });
    out.push("}");
  } else {
    throw new Error(`spewPrint: Go kind ${t.kind} (${typeName}) not handled`);
  }
}

/** Keys in Go string order (bytewise UTF-8), as spew's SortKeys sorts string keys. */
function sortedKeys(record: Record<string, unknown>): string[] {
  const encoder = new TextEncoder();
  const bytes = new Map(Object.keys(record).map((k) => [k, encoder.encode(k)]));
  return [...bytes.keys()].sort((a, b) => {
    const x = bytes.get(a)!;
    const y = bytes.get(b)!;
    const n = Math.min(x.length, y.length);
    for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return x.length - y.length;
  });
}
