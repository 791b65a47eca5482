/**
 * Storage-backed pod volumes: `persistentVolumeClaim` and generic `ephemeral` volumes resolved to
 * their bound PersistentVolume (hostPath, local and CSI sources), inline `csi` volumes, and the
 * wrapper that hands them to the volume manager as host paths.
 * @module
 */
export {
  ClaimError,
  claimProblem,
  type ClaimReader,
  type ClaimReference,
  claimReference,
  ephemeralOwnerProblem,
  resolveClaim,
  type ResolvedClaim,
  volumeProblem,
} from "./claims.ts";
export {
  persistentSourceKind,
  type PersistentSourcePlan,
  planPersistentSource,
  volumeModeOf,
} from "./persistent_sources.ts";
export {
  type CsiVolumeHost,
  type CsiVolumeRequest,
  type LocalBlockAccess,
  type LocalBlockDevices,
  type LocalBlockTarget,
  type StorageVolumesDeps,
  unableToMountMessage,
  withStorageVolumes,
} from "./storage_volumes.ts";
