/**
 * The Go type table of the pod types (generated into `gen/go_types.ts` from upstream's Go types
 * by `peers/staticpod`) and lookups over it. Types are keyed by reflect's `Type.String()`, which
 * is also the name spew prints (`core.PodSpec`, `*int64`, `[]v1.Container`).
 *
 * @module
 */

import { GO_TYPES } from "./gen/go_types.ts";

/** One struct field, in declaration order. */
export interface GoField {
  /** Go field name (`TerminationGracePeriodSeconds`). */
  name: string;
  /** Field type, a key of the table. */
  type: string;
  /** JSON name from the `json` tag (absent on internal types, which have no tags). */
  json?: string;
  omitempty?: boolean;
  /** `json:",inline"`: the embedded struct's fields are read at this level. */
  inline?: boolean;
  /** Anonymous (embedded) field. */
  embedded?: boolean;
}

/** One Go type: its kind (reflect.Kind spelling) and what it is made of. */
export interface GoType {
  name: string;
  kind: string;
  /** Element type of a pointer, slice, array or map. */
  elem?: string;
  /** Key type of a map. */
  key?: string;
  fields?: GoField[];
}

const BY_NAME = new Map<string, GoType>(GO_TYPES.map((t) => [t.name, t]));

/** The type named `name`; throws on a name outside the table (a generator/TS mismatch). */
export function goType(name: string): GoType {
  const t = BY_NAME.get(name);
  if (!t) throw new Error(`Go type ${name} is not in the generated table`);
  return t;
}

/** The v1 counterpart of an internal `core.X` type name (`core.PodSpec` → `v1.PodSpec`). */
export function v1Counterpart(coreName: string): string | undefined {
  const name = coreName.replace(/^core\./, "v1.");
  return BY_NAME.has(name) ? name : undefined;
}
