/**
 * Flag value kinds: each turns command-line text into the v1beta1 JSON shape
 * of the field it writes, with the upstream value's syntax, repeat rules
 * (kubelet-flags.md §3.3/§3.4) and error texts.
 * @module
 */
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import {
  goQuote,
  parseGoBool,
  parseGoFloat,
  parseGoInt,
  parseGoUint,
} from "../util/go_strconv.ts";
import { readCsvRecord } from "../util/csv.ts";
import { parseQuantity } from "../util/quantity.ts";
import { formatTaints, parseTaints, type Taint } from "../util/taints.ts";
import type { FlagValue } from "./flag_set.ts";

/** Where a value lives: a getter/setter pair over a config or flags object. */
export interface Slot<T> {
  get(): T | undefined;
  set(value: T): void;
}

/** Every value kind the flag table can name. */
export type ValueKind =
  | "bool"
  | "string"
  | "int32"
  | "int64"
  | "uint"
  | "float64"
  | "duration"
  | "quantity"
  | "ip"
  | "stringSlice"
  | "mapStringBool"
  | "mapStringString"
  | "mapStringStringNoSplit"
  | "langleMap"
  | "colonMultimap"
  | "configurationMap"
  | "taints"
  | "reservedMemory"
  | "level"
  | "vmodule"
  | "goBool"
  | "goInt"
  | "goString"
  | "goDuration";

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

type AnySlot = Slot<unknown>;

function sortedPairs(map: Record<string, unknown>, sep: string): string {
  return Object.keys(map).sort().map((k) => `${k}${sep}${String(map[k])}`)
    .join(",");
}

function csvField(field: string): string {
  const needsQuotes = field === ""
    ? false
    : /[",\r\n]/.test(field) || field[0] === " " ||
      field[0] === "\t";
  return needsQuotes ? `"${field.replaceAll('"', '""')}"` : field;
}

const ZERO_TEXT: Record<string, string> = {
  bool: "false",
  number: "0",
  duration: "0s",
};

function scalar(
  type: string,
  zero: FlagValue["zero"],
  slot: AnySlot,
  parse: (s: string) => unknown,
  show: (v: unknown) => string = (v) =>
    v === undefined || v === null ? ZERO_TEXT[zero] ?? "" : String(v),
): FlagValue {
  return {
    type,
    zero,
    set: (s) => slot.set(parse(s)),
    text: () => show(slot.get()),
  };
}

function mapValue(
  slot: AnySlot,
  options: { type: string; sep: string; split: boolean; error: string },
): FlagValue {
  let initialized = false;
  return {
    type: options.type,
    zero: "custom",
    set(s) {
      let map = slot.get() as Record<string, string> | undefined;
      if (!initialized || map === undefined || map === null) {
        map = {};
        initialized = true;
        slot.set(map);
      }
      const items = options.split ? s.split(",") : [s];
      for (const raw of items) {
        const item = options.split ? raw.trim() : raw;
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

function langleValue(slot: AnySlot): FlagValue {
  let initialized = false;
  return {
    type: "mapStringString",
    zero: "custom",
    set(s) {
      let map = slot.get() as Record<string, string> | undefined;
      if (!initialized || map === undefined || map === null) {
        map = {};
        initialized = true;
        slot.set(map);
      }
      for (const item of s.split(",")) {
        if (item === "") continue;
        const at = item.indexOf("<");
        if (at < 0) throw new Error("malformed pair, expect string<string");
        map[item.slice(0, at).trim()] = item.slice(at + 1).trim();
      }
    },
    text: () => sortedPairs((slot.get() ?? {}) as Record<string, unknown>, "<"),
  };
}

function mapStringBoolValue(slot: AnySlot): FlagValue {
  let initialized = false;
  return {
    type: "mapStringBool",
    zero: "custom",
    set(s) {
      let map = slot.get() as Record<string, boolean> | undefined;
      if (!initialized || map === undefined || map === null) {
        map = {};
        initialized = true;
        slot.set(map);
      }
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

function colonMultimapValue(slot: AnySlot): FlagValue {
  let initialized = false;
  return {
    type: "colonSeparatedMultimapStringString",
    zero: "custom",
    set(s) {
      let map = slot.get() as Record<string, string[]> | undefined;
      if (!initialized || map === undefined || map === null) {
        map = {};
        initialized = true;
        slot.set(map);
      }
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

function configurationMapValue(slot: AnySlot): FlagValue {
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

function stringSliceValue(slot: AnySlot): FlagValue {
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

function taintsValue(slot: AnySlot): FlagValue {
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

function reservedMemoryValue(slot: AnySlot): FlagValue {
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

function vmoduleValue(slot: AnySlot): FlagValue {
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

const IPV4_REGEXP = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** netutils `ParseIPSloppy`: IPv4 (leading zeros allowed) or IPv6 text. */
export function isSloppyIP(text: string): boolean {
  const v4 = IPV4_REGEXP.exec(text);
  if (v4) return v4.slice(1).every((part) => Number(part) <= 255);
  if (!text.includes(":") || text.includes("%")) return false;
  try {
    return new URL(`http://[${text}]/`).hostname !== "";
  } catch {
    return false;
  }
}

function ipValue(slot: AnySlot): FlagValue {
  return scalar("ip", "custom", slot, (s) => {
    if (!isSloppyIP(s)) {
      throw new Error(`${goQuote(s)} is not a valid IP address`);
    }
    return s;
  });
}

function ipSet(slot: AnySlot): FlagValue {
  const value = ipValue(slot);
  return {
    ...value,
    // `--address=""` leaves the field alone upstream (IPVar drops its target).
    set: (s) => s === "" ? undefined : value.set(s),
  };
}

function goErr(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (error) {
    const text = (error as Error).message;
    throw new Error(
      text.endsWith("value out of range")
        ? "value out of range"
        : "parse error",
    );
  }
}

/** Builds the value of `kind` writing to `slot`. */
export function createValue(kind: ValueKind, slot: AnySlot): FlagValue {
  switch (kind) {
    case "bool":
      return scalar("bool", "bool", slot, parseGoBool);
    case "string":
      return scalar("string", "string", slot, (s) => s);
    case "int32":
      return scalar(
        "int32",
        "number",
        slot,
        (s) => parseGoInt(s, { base: 0, bits: 32 }),
      );
    case "int64":
      return scalar(
        "int64",
        "number",
        slot,
        (s) => parseGoInt(s, { base: 0, bits: 64 }),
      );
    case "uint":
      return scalar(
        "uint",
        "number",
        slot,
        (s) => parseGoUint(s, { base: 0, bits: 64 }),
      );
    case "float64":
      return scalar("float64", "number", slot, parseGoFloat);
    case "duration":
      return scalar(
        "duration",
        "duration",
        slot,
        (s) => formatGoDuration(parseGoDuration(s)),
        (v) => v === undefined ? "0s" : String(v),
      );
    case "quantity":
      return scalar("quantity", "custom", slot, (s) => parseQuantity(s).text);
    case "ip":
      return ipSet(slot);
    case "stringSlice":
      return stringSliceValue(slot);
    case "mapStringBool":
      return mapStringBoolValue(slot);
    case "mapStringString":
      return mapValue(slot, {
        type: "mapStringString",
        sep: "=",
        split: true,
        error: "malformed pair, expect string=string",
      });
    case "mapStringStringNoSplit":
      return mapValue(slot, {
        type: "mapStringString",
        sep: "=",
        split: false,
        error: "malformed pair, expect string=string",
      });
    case "langleMap":
      return langleValue(slot);
    case "colonMultimap":
      return colonMultimapValue(slot);
    case "configurationMap":
      return configurationMapValue(slot);
    case "taints":
      return taintsValue(slot);
    case "reservedMemory":
      return reservedMemoryValue(slot);
    case "level":
      return scalar(
        "Level",
        "custom",
        slot,
        (s) => parseGoUint(s, { base: 10, bits: 31 }),
        (v) => String(v ?? 0),
      );
    case "vmodule":
      return vmoduleValue(slot);
    case "goBool":
      return scalar(
        "bool",
        "custom",
        slot,
        (s) => goErr(() => parseGoBool(s)),
        (v) => String(v ?? false),
      );
    case "goInt":
      return scalar(
        "int",
        "custom",
        slot,
        (s) => goErr(() => parseGoInt(s, { base: 0, bits: 64 })),
      );
    case "goString":
      return scalar("string", "custom", slot, (s) => s);
    case "goDuration":
      return scalar(
        "duration",
        "custom",
        slot,
        (s) => goErr(() => formatGoDuration(parseGoDuration(s))),
      );
  }
}

/** A value that accepts anything and stores nothing (cliflag `NoOp`). */
export function noOpValue(type: string): FlagValue {
  return { type, zero: "custom", set: () => {}, text: () => "" };
}
