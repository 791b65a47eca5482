/**
 * What may be bind-mounted for a container's `subPath` (upstream `doBindSubPath`), decided
 * without I/O. The target is `<root-dir>/pods/<uid>/volume-subpaths/<volume>/<container>/<index>`,
 * built from parts by whoever mounts, so a request cannot name another place; the source is a
 * path that must turn out, once opened, to lie inside the named volume path (the executor
 * checks the opened file, not the path text: see `volume_subpath_exec.ts`).
 *
 * @module
 */

/** Where one container mount's subPath is pinned, by its parts. */
export interface SubPathBindTarget {
  /** The pod's UID. */
  uid: string;
  /** The volume's name. */
  volume: string;
  /** The container's name. */
  container: string;
  /** The mount's index in the container's `volumeMounts`. */
  index: number;
}

/** What is pinned there. */
export interface SubPathBindSource {
  /** The volume's host path (its real path is the boundary). */
  volumePath: string;
  /** The subPath's host path inside it, as the kubelet resolved it. */
  path: string;
}

const UID = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
/** Volume and container names are DNS labels (API validation). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Undefined when the target names a subPath directory of a pod, else why not. */
export function checkSubPathTarget(
  target: SubPathBindTarget,
): string | undefined {
  if (typeof target.uid !== "string" || !UID.test(target.uid)) {
    return `pod uid ${
      JSON.stringify(target.uid)
    } is not a UID (letters, digits and dashes)`;
  }
  for (const field of ["volume", "container"] as const) {
    const value = target[field];
    if (typeof value !== "string" || !DNS_LABEL.test(value)) {
      return `${field} name ${JSON.stringify(value)} is not a DNS label`;
    }
  }
  if (
    typeof target.index !== "number" || !Number.isSafeInteger(target.index) ||
    target.index < 0
  ) {
    return `index ${JSON.stringify(target.index)} is not a whole number`;
  }
  return undefined;
}

/** Undefined when both source paths are absolute host paths, else why not. */
export function checkSubPathSource(
  source: SubPathBindSource,
): string | undefined {
  for (const field of ["volumePath", "path"] as const) {
    const value = source[field];
    if (
      typeof value !== "string" || !value.startsWith("/") ||
      value.includes("\0")
    ) {
      return `${field} ${JSON.stringify(value)} is not an absolute path`;
    }
  }
  return undefined;
}

/** The components of the pod's subPath directory below the root dir. */
export function subPathPodParts(uid: string): string[] {
  return ["pods", uid, "volume-subpaths"];
}

/** The components of the target below the root dir. */
export function subPathTargetParts(target: SubPathBindTarget): string[] {
  return [
    ...subPathPodParts(target.uid),
    target.volume,
    target.container,
    String(target.index),
  ];
}

/** True when `real` is `root` or below it (both real, absolute paths). */
export function isInside(real: string, root: string): boolean {
  if (root === "/") return real.startsWith("/");
  return real === root || real.startsWith(`${root}/`);
}
