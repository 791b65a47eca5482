/**
 * `eviction.DefaultEvictionHard` per OS, applied by `loadConfigFile` only.
 * @module
 */

const LINUX: Readonly<Record<string, string>> = {
  "memory.available": "100Mi",
  "nodefs.available": "10%",
  "nodefs.inodesFree": "5%",
  "imagefs.available": "15%",
  "imagefs.inodesFree": "5%",
};

const WINDOWS: Readonly<Record<string, string>> = {
  "memory.available": "500Mi",
  "nodefs.available": "10%",
  "imagefs.available": "15%",
};

/** The default hard eviction thresholds for an OS (`Deno.build.os` names). */
export function defaultEvictionHard(
  os: string = Deno.build.os,
): Record<string, string> {
  if (os === "linux") return { ...LINUX };
  if (os === "windows") return { ...WINDOWS };
  const others = { ...LINUX };
  delete others["nodefs.inodesFree"];
  delete others["imagefs.inodesFree"];
  return others;
}

/**
 * loadConfigFile's evictionHard step: nil gets the defaults; with
 * mergeDefaultEvictionSettings each missing default key is added.
 */
export function withEvictionHardDefaults(
  evictionHard: Record<string, string> | undefined,
  options: { mergeDefaults: boolean; os?: string | undefined },
): Record<string, string> {
  const defaults = defaultEvictionHard(options.os);
  if (evictionHard === undefined) return defaults;
  if (!options.mergeDefaults) return evictionHard;
  return { ...defaults, ...evictionHard };
}
