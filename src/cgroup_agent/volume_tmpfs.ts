/**
 * What the agent may mount, decided without I/O: a tmpfs on one pod volume's directory,
 * `<root-dir>/pods/<uid>/volumes/<plugin>/<name>`, for the volume kinds upstream keeps in
 * memory (secret, projected, downwardAPI, emptyDir of medium Memory), with upstream's options only. The request names
 * the parts, never a path: the agent builds the path from its own root dir, so the checks
 * below are the whole policy (the executor adds: no symbolic link on the way).
 *
 * @module
 */

/** Plugin directories (upstream's escaped plugin names) whose volumes may get a tmpfs. */
export const TMPFS_VOLUME_PLUGINS: readonly string[] = [
  "kubernetes.io~secret",
  "kubernetes.io~projected",
  "kubernetes.io~downward-api",
  "kubernetes.io~empty-dir",
];

/** One pod volume's directory, by its parts. */
export interface TmpfsTarget {
  /** The pod's UID. */
  uid: string;
  /** The escaped plugin name, one of {@linkcode TMPFS_VOLUME_PLUGINS}. */
  plugin: string;
  /** The volume's name. */
  name: string;
}

/** UUIDs of API pods, 32 hex digits of static pods; one component, no dots. */
const UID = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
/** A volume name is a DNS label (API validation). */
const VOLUME_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Undefined when `target` names a volume directory the agent may mount on, else why not. */
export function checkTmpfsTarget(target: TmpfsTarget): string | undefined {
  if (typeof target.uid !== "string" || !UID.test(target.uid)) {
    return `pod uid ${
      JSON.stringify(target.uid)
    } is not a UID (letters, digits and dashes)`;
  }
  if (!TMPFS_VOLUME_PLUGINS.includes(target.plugin)) {
    return `plugin ${JSON.stringify(target.plugin)} is not one of ${
      TMPFS_VOLUME_PLUGINS.join(", ")
    }`;
  }
  if (typeof target.name !== "string" || !VOLUME_NAME.test(target.name)) {
    return `volume name ${JSON.stringify(target.name)} is not a DNS label`;
  }
  return undefined;
}

/** Undefined when `sizeBytes` is a size the agent passes on (0: no size, the kernel's half of RAM). */
export function checkTmpfsSize(sizeBytes: unknown): string | undefined {
  return typeof sizeBytes === "number" && Number.isSafeInteger(sizeBytes) &&
      sizeBytes >= 0
    ? undefined
    : `size ${JSON.stringify(sizeBytes)} is not a whole number of bytes`;
}

/** The components of the target's directory below the root dir. */
export function tmpfsTargetParts(target: TmpfsTarget): string[] {
  return ["pods", target.uid, "volumes", target.plugin, target.name];
}

/**
 * Upstream's tmpfs options for a memory-backed volume (`generateTmpfsMountOptions`): the size
 * when there is one, `noswap` where the kernel has it. Nothing else can be asked for.
 */
export function tmpfsMountOptions(sizeBytes: number, noswap: boolean): string {
  const options = sizeBytes > 0 ? [`size=${sizeBytes}`] : [];
  if (noswap) options.push("noswap");
  return options.join(",");
}

/**
 * Upstream `IsTmpfsNoswapOptionSupported` by the kernel release: Linux 6.4 or later, outside a
 * user namespace (where the kernel refuses the option).
 */
export function tmpfsNoswapSupported(
  release: string,
  inUserNamespace: boolean,
): boolean {
  if (inUserNamespace) return false;
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 6 || (major === 6 && minor >= 4);
}

/** One line of /proc/self/mountinfo: where, what type, which source, its propagation tags. */
export interface MountInfoEntry {
  mountPoint: string;
  fsType: string;
  source: string;
  /** The optional fields before the separator (`shared:N`, `master:N`, ...). */
  optionalFields: string[];
}

function unescapeMountInfo(field: string): string {
  return field.replace(
    /\\([0-7]{3})/g,
    (_, oct: string) => String.fromCharCode(parseInt(oct, 8)),
  );
}

/** Parses /proc/self/mountinfo (proc(5)); malformed lines are skipped. */
export function parseMountInfo(text: string): MountInfoEntry[] {
  const out: MountInfoEntry[] = [];
  for (const line of text.split("\n")) {
    const [head, tail] = line.split(" - ");
    if (!head || !tail) continue;
    const fields = head.split(" ");
    const [fsType, source] = tail.split(" ");
    if (fields.length < 5 || !fsType || source === undefined) continue;
    out.push({
      mountPoint: unescapeMountInfo(fields[4]!),
      fsType,
      source: unescapeMountInfo(source),
      optionalFields: fields.slice(6).filter((f) => f !== ""),
    });
  }
  return out;
}

/** True when the top-most mount at `path` is a tmpfs. */
export function isTmpfsMountPoint(
  entries: readonly MountInfoEntry[],
  path: string,
): boolean {
  const at = entries.filter((e) => e.mountPoint === path);
  return at.at(-1)?.fsType === "tmpfs";
}
