/**
 * The pure half of a container's mounts (upstream `makeMounts`): each `volumeMount` against
 * the pod's set-up volumes, `readOnly` (forced for downwardAPI volumes, as upstream mounts
 * them), `mountPropagation` to CRI propagation (Bidirectional only for privileged containers),
 * `recursiveReadOnly` against what the runtime can do,
 * and which running containers could rewrite a subPath before the runtime mounts it.
 *
 * @module
 */

import type { Container, Pod, VolumeMount } from "../api/mod.ts";

/** A set-up volume: where it is on the host and how it may be mounted. */
export interface MountedVolume {
  /** Host directory (or file/socket/device for hostPath) of the volume. */
  hostPath: string;
  /** True when the volume is always mounted read-only (downwardAPI). */
  readOnly: boolean;
  /** For hostPath volumes: the host path as written (overlap checks). */
  hostPathSource?: string;
}

/** CRI `MountPropagation` values. */
export const PROPAGATION = {
  private: 0,
  hostToContainer: 1,
  bidirectional: 2,
} as const;

/**
 * Upstream `translateMountPropagation`.
 * @throws {RangeError} for Bidirectional in an unprivileged container or an unknown mode.
 */
export function mountPropagation(
  mode: string | undefined,
  privileged: boolean,
): number {
  switch (mode ?? "None") {
    case "None":
      return PROPAGATION.private;
    case "HostToContainer":
      return PROPAGATION.hostToContainer;
    case "Bidirectional":
      if (!privileged) {
        throw new RangeError(
          "Bidirectional mount propagation is available only to privileged containers",
        );
      }
      return PROPAGATION.bidirectional;
  }
  throw new RangeError(`invalid MountPropagation mode: "${mode}"`);
}

/**
 * Upstream `resolveRecursiveReadOnly`: whether `mount` is to be recursively read-only, given
 * whether the pod's runtime handler can make it so.
 * @throws {RangeError} with upstream's text for a mode the mount or the runtime cannot have.
 */
export function recursiveReadOnly(
  mount: VolumeMount,
  runtimeSupportsIt: boolean,
): boolean {
  const mode = mount.recursiveReadOnly ?? "Disabled";
  if (mode === "Disabled") return false;
  const fail = (why: string) =>
    new RangeError(
      `failed to resolve recursive read-only mode: volume "${mount.name}" requested recursive read-only mode, but ${why}`,
    );
  if (!mount.readOnly) throw fail("it is not read-only");
  const propagation = mount.mountPropagation ?? "None";
  if (propagation !== "None") {
    throw fail(`it is not compatible with propagation "${propagation}"`);
  }
  if (mode === "IfPossible") return runtimeSupportsIt;
  if (mode === "Enabled") {
    if (!runtimeSupportsIt) throw fail("it is not supported by the runtime");
    return true;
  }
  throw new RangeError(
    `failed to resolve recursive read-only mode: unknown recursive read-only mode "${mode}"`,
  );
}

/** The volume named by `mount`, or upstream's error. */
export function volumeFor(
  volumes: ReadonlyMap<string, MountedVolume>,
  mount: VolumeMount,
  container: Container,
): MountedVolume {
  const volume = volumes.get(mount.name);
  if (!volume) {
    throw new RangeError(
      `cannot find volume "${mount.name}" to mount into container "${container.name}"`,
    );
  }
  return volume;
}

function overlaps(a: string, b: string): boolean {
  const x = a.replace(/\/+$/, "") + "/";
  const y = b.replace(/\/+$/, "") + "/";
  return x.startsWith(y) || y.startsWith(x);
}

/**
 * Every container the spec lists, of every kind (`containers`, `initContainers`,
 * `ephemeralContainers` and any list a later API adds): taken from the spec's own fields, so
 * a new kind of container cannot be left out of the subPath writer check.
 */
export function specContainers(pod: Pod): Container[] {
  const out: Container[] = [];
  for (const [key, value] of Object.entries(pod.spec)) {
    if (!/(^c|C)ontainers$/.test(key) || !Array.isArray(value)) continue;
    for (const c of value) {
      if (typeof c === "object" && c !== null && typeof c.name === "string") {
        out.push(c as Container);
      }
    }
  }
  return out;
}

/**
 * Containers in `running` (other than `self`) that mount the same data as volume `name`
 * writable: the same volume, or a hostPath volume overlapping it. Any of them could swap a
 * component of a subPath for a symlink between its check and the runtime's bind mount.
 */
export function writersOf(
  pod: Pod,
  volumes: ReadonlyMap<string, MountedVolume>,
  options: { name: string; self: string; running: ReadonlySet<string> },
): string[] {
  const target = volumes.get(options.name);
  const same = (other: string) => {
    if (other === options.name) return true;
    const v = volumes.get(other);
    return !!(target?.hostPathSource && v?.hostPathSource &&
      overlaps(target.hostPathSource, v.hostPathSource));
  };
  return specContainers(pod).filter((c) =>
    c.name !== options.self && options.running.has(c.name) &&
    (c.volumeMounts ?? []).some((m) =>
      same(m.name) && !m.readOnly && !volumes.get(m.name)?.readOnly
    )
  ).map((c) => c.name);
}
