/**
 * Pod volumes: emptyDir (disk and memory), hostPath with its type checks, downwardAPI and
 * projected downwardAPI files written atomically, container mounts with `readOnly`,
 * `mountPropagation` and safely resolved `subPath`s, and teardown. Sources that need the API
 * server fail to mount with reason `FailedMount`.
 *
 * This folder must not talk to the container runtime or read global time; it never mounts
 * anything itself (the runtime bind-mounts the host paths it returns).
 *
 * @module
 */

/** The node's volume manager: `createVolumeManager(deps, options)`. */
export { createVolumeManager } from "./volume_manager.ts";
export type {
  ContainerMountContext,
  CriDevice,
  CriMount,
  EmptyDirUsage,
  VolumeManager,
  VolumeManagerDeps,
  VolumeManagerOptions,
  VolumeSetUp,
} from "./volume_manager.ts";
/** Upstream's atomic writer for kubelet-written volumes. */
export {
  validatePayloadPath,
  writeAtomically,
  writerLayoutForPermissions,
} from "./atomic_writer.ts";
export type { PayloadFile, WriterLayout } from "./atomic_writer.ts";
/** hostPath type checks. */
export {
  checkHostPathType,
  denoHostPathFs,
  hostPathDenied,
} from "./host_path.ts";
export type { HostFileKind, HostPathFs } from "./host_path.ts";
/** subPath text checks and in-volume resolution. */
export { denoSubPathFs, resolveSubPath, validateSubPath } from "./subpath.ts";
export type {
  ResolvedSubPath,
  SubPathAccess,
  SubPathBinds,
  SubPathFs,
  SubPathPin,
} from "./subpath.ts";
/** Mount mapping pieces. */
export {
  mountPropagation,
  PROPAGATION,
  writersOf,
} from "./container_mounts.ts";
export type { MountedVolume } from "./container_mounts.ts";
export {
  downwardApiPayload,
  formatMap,
  podMetadataField,
} from "./downward_api.ts";
export type { NodeAllocatable } from "./downward_api.ts";
export { podVolumes, VolumeSpecError } from "./volume_sources.ts";
export type {
  DownwardApiItem,
  PodVolume,
  VolumeSource,
} from "./volume_sources.ts";
export {
  DEFAULT_MEMORY_VOLUME_DIR,
  escapePluginName,
  MEMORY_DIR_ROOT_PREFIX,
  memoryVolumeDirFor,
  podVolumeDirectory,
  podVolumesDirectory,
} from "./volume_paths.ts";
/** fsGroup ownership for volumes no container can write while it runs. */
export { ownershipMode, setVolumeOwnership } from "./volume_ownership.ts";
export {
  createMemoryVolumes,
  MEMORY_BACKED_PLUGINS,
  type MemoryVolumes,
  memoryVolumeSize,
  type TmpfsAccess,
  type TmpfsVolume,
  type VolumeTmpfs,
} from "./memory_volumes.ts";
