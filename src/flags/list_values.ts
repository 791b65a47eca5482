/**
 * List-shaped flag values: pflag string slices (CSV), taints, reserved
 * memory per NUMA node and vmodule items.
 * @module
 */
import { readCsvRecord } from "../util/csv.ts";
import { goQuote, parseGoInt, parseGoUint } from "../util/go_strconv.ts";
import { parseQuantity } from "../util/quantity.ts";
import { formatTaints, parseTaints, type Taint } from "../util/taints.ts";
import type { FlagValue } from "./flag_set.ts";
import { sortedPairs } from "./map_values.ts";
import type { MemoryReservation, Slot, VModuleItem } from "./value_types.ts";

type AnySlot = Slot<unknown>;

function csvField(field: string): string {
  const needsQuotes = field === ""
    ? false
    : /[",\r\n]/.test(field) || field[0] === " " ||
      field[0] === "\t";
  return needsQuotes ? `"${field.replaceAll('"', '""')}"` : field;
}

/** A list value kind. */
export function stringSliceValue(slot: AnySlot): FlagValue {
  let changed = false;
  return {
    type: "stringSlice",
    zero: "slice",
    set(s) {
      const items = readCsvRecord(s);
      const current = (slot.get() ?? []) as string[];
      slot.set(changed ? [...current, ...items] : items);
      changed = true;
    },
    text: () => `[${((slot.get() ?? []) as string[]).map(csvField).join(",")}]`,
  };
}

/** A list value kind. */
export function taintsValue(slot: AnySlot): FlagValue {
  return {
    type: "[]v1.Taint",
    zero: "custom",
    set(s) {
      slot.set(s === "" ? undefined : parseTaints(s.split(",")));
    },
    text: () => formatTaints((slot.get() ?? []) as Taint[]),
  };
}

const RESERVED_FORMAT =
  "the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got ";

function parseAtoi(text: string): number {
  return parseGoInt(text, { base: 10, bits: 64 });
}

/** A list value kind. */
export function reservedMemoryValue(slot: AnySlot): FlagValue {
  let initialized = false;
  let detached = false;
  return {
    type: "reserved-memory",
    zero: "custom",
    set(s) {
      if (detached) {
        throw new Error("no target (nil pointer to *[]MemoryReservation");
      }
      if (s === "") {
        // Upstream drops its pointer to the field: later values have no target.
        detached = true;
        return;
      }
      let list = slot.get() as MemoryReservation[] | undefined;
      if (!initialized || list === undefined || list === null) {
        list = [];
        initialized = true;
        slot.set(list);
      }
      for (const reservation of s.split(";")) {
        const parts = reservation.split(":");
        if (parts.length !== 2) throw new Error(RESERVED_FORMAT + reservation);
        let numaNode: number;
        try {
          numaNode = parseAtoi(parts[0] ?? "");
        } catch {
          throw new Error(
            `failed to convert the NUMA node ID, exptected integer, got ${
              parts[0]
            }`,
          );
        }
        const limits: Record<string, string> = {};
        for (const typed of (parts[1] ?? "").split(",")) {
          const limit = typed.split("=");
          if (limit.length !== 2) {
            throw new Error(
              `the reserved limit has incorrect value, expected type=quantatity, got ${typed}`,
            );
          }
          const [name = "", quantity = ""] = limit;
          if (name !== "memory" && !name.startsWith("hugepages-")) {
            throw new Error(
              `memory type conversion error, unknown type: ${goQuote(name)}`,
            );
          }
          try {
            parseQuantity(quantity);
          } catch {
            throw new Error(
              `failed to parse the quantatity, expected quantatity, got ${quantity}`,
            );
          }
          limits[name] = quantity;
        }
        list.push({ numaNode: numaNode | 0, limits });
      }
    },
    text() {
      const list = (slot.get() ?? []) as MemoryReservation[];
      return list.map((r) => `${r.numaNode}:${sortedPairs(r.limits, "=")}`)
        .sort().join(",");
    },
  };
}

/** A list value kind. */
export function vmoduleValue(slot: AnySlot): FlagValue {
  return {
    type: "pattern=N,...",
    zero: "custom",
    set(s) {
      const list = [...((slot.get() ?? []) as VModuleItem[])];
      for (const item of s.split(",")) {
        if (item === "") continue;
        const parts = item.split("=");
        if (parts.length !== 2 || parts[0] === "" || parts[1] === "") {
          throw new Error(
            `${goQuote(item)} does not have the pattern=N format`,
          );
        }
        let verbosity: number;
        try {
          verbosity = parseGoUint(parts[1] ?? "", { base: 10, bits: 31 });
        } catch (error) {
          throw new Error(
            `parsing verbosity in ${goQuote(item)}: ${
              (error as Error).message
            }`,
          );
        }
        list.push({ filePattern: parts[0] ?? "", verbosity });
      }
      slot.set(list);
    },
    text: () =>
      ((slot.get() ?? []) as VModuleItem[]).map((i) =>
        `${i.filePattern}=${i.verbosity}`
      ).join(
        ",",
      ),
  };
}
