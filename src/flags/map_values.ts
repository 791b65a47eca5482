/**
 * Map-shaped flag values: `k=v` maps (comma split or not), `k<v` eviction
 * thresholds, `k:v` multimaps, `Name=bool` feature gates and the never-
 * clearing `--node-labels` map.
 * @module
 */
import { parseGoBool } from "../util/go_strconv.ts";
import type { FlagValue } from "./flag_set.ts";
import type { Slot } from "./value_types.ts";

type AnySlot = Slot<unknown>;

/** Sorted `k<sep>v` pairs joined with `,` (the cliflag maps' `String()`). */
export function sortedPairs(map: Record<string, unknown>, sep: string): string {
  return Object.keys(map).sort().map((k) => `${k}${sep}${String(map[k])}`)
    .join(",");
}

/**
 * The map a cliflag map value writes into: the first Set of a parse replaces
 * whatever was there (defaults, values from the config file); later Sets add.
 */
function clearingTarget(slot: AnySlot): () => Record<string, unknown> {
  let initialized = false;
  return () => {
    let map = slot.get() as Record<string, unknown> | undefined | null;
    if (!initialized || map === undefined || map === null) {
      map = {};
      initialized = true;
      slot.set(map);
    }
    return map;
  };
}

/** A `k<sep>v` map value kind (MapStringString, LangleSeparatedMapStringString). */
export function mapValue(
  slot: AnySlot,
  options: { type: string; sep: string; split: boolean; error: string },
): FlagValue {
  const target = clearingTarget(slot);
  return {
    type: options.type,
    zero: "custom",
    set(s) {
      const map = target() as Record<string, string>;
      // Like cliflag: only truly empty items are skipped; "a=b, " fails.
      for (const item of options.split ? s.split(",") : [s]) {
        if (options.split && item === "") continue;
        const at = item.indexOf(options.sep);
        if (at < 0) throw new Error(options.error);
        map[item.slice(0, at).trim()] = item.slice(at + 1).trim();
      }
    },
    text: () =>
      sortedPairs((slot.get() ?? {}) as Record<string, unknown>, options.sep),
  };
}

/** A map value kind. */
export function mapStringBoolValue(slot: AnySlot): FlagValue {
  const target = clearingTarget(slot);
  return {
    type: "mapStringBool",
    zero: "custom",
    set(s) {
      const map = target() as Record<string, boolean>;
      for (const item of s.split(",")) {
        if (item === "") continue;
        const at = item.indexOf("=");
        if (at < 0) throw new Error("malformed pair, expect string=bool");
        const key = item.slice(0, at).trim();
        const text = item.slice(at + 1).trim();
        let value: boolean;
        try {
          value = parseGoBool(text);
        } catch (error) {
          throw new Error(
            `invalid value of ${key}: ${text}, err: ${
              (error as Error).message
            }`,
          );
        }
        map[key] = value;
      }
    },
    text: () => sortedPairs((slot.get() ?? {}) as Record<string, unknown>, "="),
  };
}

/** A map value kind. */
export function colonMultimapValue(slot: AnySlot): FlagValue {
  const target = clearingTarget(slot);
  return {
    type: "colonSeparatedMultimapStringString",
    zero: "custom",
    set(s) {
      const map = target() as Record<string, string[]>;
      for (const item of s.split(",")) {
        if (item === "") continue;
        const at = item.indexOf(":");
        if (at < 0) throw new Error("malformed pair, expect string:string");
        const key = item.slice(0, at).trim();
        (map[key] ??= []).push(item.slice(at + 1).trim());
      }
    },
    text() {
      const map = (slot.get() ?? {}) as Record<string, string[]>;
      return Object.keys(map).sort().flatMap((k) =>
        (map[k] ?? []).map((v) => `${k}:${v}`)
      )
        .join(",");
    },
  };
}

/** A map value kind. */
export function configurationMapValue(slot: AnySlot): FlagValue {
  return {
    type: "mapStringString",
    zero: "custom",
    set(s) {
      let map = slot.get() as Record<string, string> | undefined;
      if (map === undefined || map === null) {
        map = {};
        slot.set(map);
      }
      for (const item of s.split(",")) {
        if (item === "") continue;
        const at = item.indexOf("=");
        if (at < 0) map[item.trim()] = "";
        else map[item.slice(0, at).trim()] = item.slice(at + 1).trim();
      }
    },
    text: () => sortedPairs((slot.get() ?? {}) as Record<string, unknown>, "="),
  };
}
