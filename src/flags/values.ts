/**
 * Flag value kinds: each turns command-line text into the v1beta1 JSON shape
 * of the field it writes, with the upstream value's syntax, repeat rules
 * (pflag and component-base/cli/flag; summed up in docs/flags-and-config.md)
 * and error texts.
 * @module
 */
import { isSloppyIP } from "../util/sloppy_ip.ts";
export { isSloppyIP };
import { formatGoDuration, parseGoDuration } from "../util/go_duration.ts";
import {
  goQuote,
  parseGoBool,
  parseGoFloat,
  parseGoInt,
  parseGoUint,
} from "../util/go_strconv.ts";
import { parseQuantity } from "../util/quantity.ts";
import type { FlagValue } from "./flag_set.ts";
import {
  reservedMemoryValue,
  stringSliceValue,
  taintsValue,
  vmoduleValue,
} from "./list_values.ts";
import {
  colonMultimapValue,
  configurationMapValue,
  mapStringBoolValue,
  mapValue,
} from "./map_values.ts";
import type { Slot } from "./value_types.ts";

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

type AnySlot = Slot<unknown>;

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
      return mapValue(slot, {
        type: "mapStringString",
        sep: "<",
        split: true,
        error: "malformed pair, expect string<string",
      });
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
