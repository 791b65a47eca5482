/**
 * What the kubelet does with the source of a bound PersistentVolume (pure): a `hostPath` PV is
 * its host path with its `type` check, a `local` PV its directory or block device; a `csi` PV goes to the CSI
 * driver; every other in-tree source (nfs, iscsi, rbd, ...) needs a mount(8) or a block device
 * the kubelet cannot make under its permissions and is refused with that reason.
 * @module
 */
import type {
  CsiPersistentVolumeSource,
  PersistentVolume,
} from "../api/mod.ts";

/** The plan for one bound volume. */
export type PersistentSourcePlan =
  | { kind: "hostPath"; path: string; type: string }
  /** `fsType` applies when the path is a block device mounted as a file system. */
  | { kind: "local"; path: string; fsType: string }
  | { kind: "csi"; source: CsiPersistentVolumeSource }
  | { kind: "refused"; message: string };

const IGNORED = new Set([
  "claimRef",
  "volumeMode",
  "accessModes",
  "mountOptions",
  "capacity",
  "persistentVolumeReclaimPolicy",
  "storageClassName",
  "nodeAffinity",
  "volumeAttributesClassName",
]);

/** The PV's volume source key (`hostPath`, `local`, `nfs`, ...), if any. */
export function persistentSourceKind(
  volume: PersistentVolume,
): string | undefined {
  return Object.keys(volume.spec ?? {}).find((k) => !IGNORED.has(k));
}

/** Upstream's PV volume mode: `Filesystem` unless the PV says `Block`. */
export function volumeModeOf(volume: PersistentVolume): string {
  return volume.spec?.volumeMode || "Filesystem";
}

/** The plan for `volume`'s source. */
export function planPersistentSource(
  volume: PersistentVolume,
): PersistentSourcePlan {
  const spec = volume.spec ?? {};
  if (spec.hostPath) {
    return {
      kind: "hostPath",
      path: spec.hostPath.path,
      type: spec.hostPath.type ?? "",
    };
  }
  if (spec.local) {
    if (!spec.local.path) {
      return {
        kind: "refused",
        message: "local volume source is nil or local path is not set",
      };
    }
    return {
      kind: "local",
      path: spec.local.path,
      fsType: spec.local.fsType ?? "",
    };
  }
  if (spec.csi) return { kind: "csi", source: spec.csi };
  const kind = persistentSourceKind(volume) ?? "(none)";
  return {
    kind: "refused",
    message:
      `${kind} persistent volumes are not supported by this kubelet: it mounts no file systems itself (no mount(8) under its permissions); use a CSI driver, a local or a hostPath volume (docs/volumes.md)`,
  };
}
