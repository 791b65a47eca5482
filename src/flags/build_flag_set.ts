/**
 * Builds the kubelet's FlagSet from the flag table, binding every flag to the
 * object it writes: the KubeletConfiguration (v1beta1 JSON shape), the
 * KubeletFlags, or the cAdvisor settings.
 * @module
 */
import { FlagSet, wordSepNormalize } from "./flag_set.ts";
import { FLAG_SPECS, type FlagSpec } from "./flag_specs.ts";
import type { KubeletFlags } from "./kubelet_flags.ts";
import type { Slot } from "./value_types.ts";
import { createValue, noOpValue } from "./values.ts";
import { createVersionValue, type VersionRequest } from "./version_value.ts";

/** Reads a dotted path (`authentication.anonymous.enabled`). */
export function getPath(root: Record<string, unknown>, path: string): unknown {
  let node: unknown = root;
  for (const key of path.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Writes a dotted path, creating missing parent objects; `undefined` deletes. */
export function setPath(
  root: Record<string, unknown>,
  assignment: { path: string; value: unknown },
): void {
  const { path, value } = assignment;
  const keys = path.split(".");
  const last = keys.pop() as string;
  let node = root;
  for (const key of keys) {
    let next = node[key];
    if (next === null || typeof next !== "object") {
      next = {};
      node[key] = next;
    }
    node = next as Record<string, unknown>;
  }
  if (value === undefined) delete node[last];
  else node[last] = value;
}

function pathSlot(root: Record<string, unknown>, path: string): Slot<unknown> {
  return {
    get: () => getPath(root, path),
    set: (value) => setPath(root, { path, value }),
  };
}

/** Options for {@linkcode createKubeletFlagSet}. */
export interface KubeletFlagSetOptions {
  /** The configuration the config-backed flags write (v1beta1 JSON shape). */
  config: Record<string, unknown>;
  /** The CLI-only settings the other flags write. */
  flags: KubeletFlags;
  /** The build's version, for `--version=vX.Y.Z` checks. */
  buildVersion: string;
  /** Receives deprecation notices. */
  output?: (text: string) => void;
  /**
   * `precedence` builds upstream's re-parse set: cAdvisor flags,
   * `--version` and `--help` accept and drop their value (and need one).
   */
  mode?: "main" | "precedence";
  /**
   * Take `--help` defaults from the table instead of the bound objects, so
   * the set can be parsed against a placeholder config before the real one
   * is loaded.
   */
  tableDefaults?: boolean;
  /** Extra text appended to a flag's usage (e.g. the feature gate list). */
  usageSuffix?: Record<string, string>;
}

/** The built set and the values the command reads back. */
export interface KubeletFlagSet {
  flagSet: FlagSet;
  /** What `--version` asked for. */
  versionRequest(): VersionRequest;
  /** True when `--help`/`-h` was given. */
  helpRequested(): boolean;
  /** The table row of a flag. */
  spec(name: string): FlagSpec | undefined;
}

/** Builds the flag set for one parse. */
export function createKubeletFlagSet(
  options: KubeletFlagSetOptions,
): KubeletFlagSet {
  const { config, flags } = options;
  const precedence = options.mode === "precedence";
  const flagSet = new FlagSet({
    normalize: wordSepNormalize,
    ...(options.output ? { output: options.output } : {}),
  });
  let help = false;
  const version = createVersionValue({
    buildVersion: options.buildVersion,
    onDynamicVersion: (v) => {
      flags.reportedVersion = v;
    },
  });
  const specs = new Map<string, FlagSpec>();
  const flagsRecord = flags as unknown as Record<string, unknown>;
  for (const spec of FLAG_SPECS) {
    specs.set(spec.name, spec);
    const usage = spec.usage + (options.usageSuffix?.[spec.name] ?? "");
    const base = {
      name: spec.name,
      usage,
      ...(options.tableDefaults ? { defValue: spec.def } : {}),
      ...(spec.shorthand ? { shorthand: spec.shorthand } : {}),
      ...(spec.deprecated ? { deprecated: spec.deprecated } : {}),
    };
    if (spec.group === "global") {
      if (precedence) {
        // Upstream's re-parse set has no --help, so `--help=false` would end
        // the process there with status 0; we accept and ignore it instead.
        const type = spec.kind === "version" ? "version" : createValue(
          spec.kind,
          { get: () => undefined, set: () => {} },
        ).type;
        flagSet.add({ ...base, value: noOpValue(type) });
        continue;
      }
      if (spec.kind === "version") {
        flagSet.add({ ...base, value: version, noOptDefVal: "true" });
        continue;
      }
      if (spec.name === "help") {
        const value = createValue("bool", {
          get: () => help,
          set: (v) => help = v === true,
        });
        flagSet.add({ ...base, value, noOptDefVal: "true" });
        continue;
      }
    }
    if (spec.kind === "version") continue;
    const slot = spec.group === "config"
      ? pathSlot(config, spec.field)
      : spec.group === "cli"
      ? pathSlot(flagsRecord, spec.field)
      : {
        get: () => flags.cadvisor[spec.field],
        set: (v: unknown) => {
          flags.cadvisor[spec.field] = v as string | number | boolean;
        },
      };
    const value = createValue(spec.kind, slot);
    const boolLike = spec.kind === "bool" || spec.kind === "goBool";
    flagSet.add({
      ...base,
      value,
      ...(boolLike ? { noOptDefVal: "true" } : {}),
    });
  }
  return {
    flagSet,
    versionRequest: () => version.request(),
    helpRequested: () => help,
    spec: (name) => specs.get(wordSepNormalize(name)),
  };
}
