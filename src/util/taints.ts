/**
 * Node taint specs as `--register-with-taints` takes them:
 * `key=value:Effect` or `key:Effect`, comma separated.
 * @module
 */
import { labelValueErrors, qualifiedNameErrors } from "./k8s_names.ts";

/** A taint in the core/v1 JSON shape (`value` omitted when empty). */
export interface Taint {
  key: string;
  value?: string;
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

const EFFECTS = new Set(["NoSchedule", "PreferNoSchedule", "NoExecute"]);

/** A bad taint spec; the message uses upstream's wording. */
export class TaintSpecError extends SyntaxError {
  constructor(message: string) {
    super(message);
    this.name = "TaintSpecError";
  }
}

interface ParsedTaint {
  key: string;
  value: string;
  effect: string;
}

function parseOne(spec: string): ParsedTaint {
  const parts = spec.split(":");
  let key: string;
  let value = "";
  let effect = "";
  if (parts.length === 1) {
    key = parts[0] ?? "";
  } else if (parts.length === 2) {
    effect = parts[1] ?? "";
    if (!EFFECTS.has(effect)) {
      throw new TaintSpecError(
        `invalid taint effect: ${effect}, unsupported taint effect`,
      );
    }
    const kv = (parts[0] ?? "").split("=");
    if (kv.length > 2) throw new TaintSpecError(`invalid taint spec: ${spec}`);
    key = kv[0] ?? "";
    if (kv.length === 2) {
      value = kv[1] ?? "";
      const errs = labelValueErrors(value);
      if (errs.length > 0) {
        throw new TaintSpecError(
          `invalid taint spec: ${spec}, ${errs.join("; ")}`,
        );
      }
    }
  } else {
    throw new TaintSpecError(`invalid taint spec: ${spec}`);
  }
  const errs = qualifiedNameErrors(key);
  if (errs.length > 0) {
    throw new TaintSpecError(`invalid taint spec: ${spec}, ${errs.join("; ")}`);
  }
  return { key, value, effect };
}

/**
 * Parses taint specs (upstream `taints.ParseTaints`, keeping only the taints
 * to add: a spec ending in `-` is a removal and is dropped).
 */
export function parseTaints(specs: string[]): Taint[] {
  const taints: Taint[] = [];
  const seen = new Set<string>();
  for (const spec of specs) {
    if (spec.endsWith("-")) continue;
    const taint = parseOne(spec);
    if (taint.effect === "") {
      throw new TaintSpecError(`invalid taint spec: ${spec}`);
    }
    const id = `${taint.effect}\u0000${taint.key}`;
    if (seen.has(id)) {
      throw new TaintSpecError(
        `duplicated taints with the same key and effect: {${taint.key} ${taint.value} ${taint.effect} <nil>}`,
      );
    }
    seen.add(id);
    const out: Taint = {
      key: taint.key,
      effect: taint.effect as Taint["effect"],
    };
    if (taint.value !== "") out.value = taint.value;
    taints.push(out);
  }
  return taints;
}

/** `key=value:Effect` joined with `,` (upstream's `String()`). */
export function formatTaints(taints: readonly Taint[]): string {
  return taints.map((t) => `${t.key}=${t.value ?? ""}:${t.effect}`).join(",");
}
