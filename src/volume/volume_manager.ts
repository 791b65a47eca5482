/**
 * Sets up, mounts and tears down one node's pod volumes (the executor over the pure pieces):
 * emptyDir directories (0777, as upstream) under the pod dir, memory-backed emptyDirs under a
 * tmpfs directory the kubelet owns (it cannot mount a tmpfs of its own: no `--allow-run`),
 * hostPath type checks, downwardAPI files written atomically and rewritten when the pod's
 * metadata changes, and each container's CRI mounts with safely resolved subPaths.
 *
 * @module
 */

import { statfs } from "node:fs/promises";
import type { Container, Pod } from "../api/mod.ts";
import type { Logger } from "../log/mod.ts";
import { directoryUsage } from "../util/directory_size.ts";
import {
  writeAtomically,
  type WriterLayout,
  writerLayoutForPermissions,
} from "./atomic_writer.ts";
import {
  type MountedVolume,
  mountPropagation,
  recursiveReadOnly,
  volumeFor,
  writersOf,
} from "./container_mounts.ts";
import { downwardApiPayload, type NodeAllocatable } from "./downward_api.ts";
import type { MemoryVolumes } from "./memory_volumes.ts";
import { setVolumeOwnership } from "./volume_ownership.ts";
import {
  checkHostPathType,
  denoHostPathFs,
  hostPathDenied,
  type HostPathFs,
} from "./host_path.ts";
import {
  denoSubPathFs,
  resolveSubPath,
  type SubPathAccess,
  type SubPathFs,
  validateSubPath,
} from "./subpath.ts";
import {
  DEFAULT_MEMORY_VOLUME_DIR,
  escapePluginName,
  memoryVolumeDirectory,
  PLUGIN_NAMES,
  podVolumeDirectory,
  podVolumesDirectory,
} from "./volume_paths.ts";
import {
  podVolumes,
  unsupportedSourceMessage,
  type VolumeSource,
} from "./volume_sources.ts";
import { errorMessage } from "../util/error_message.ts";
import { pathExists } from "../util/path_exists.ts";
import { parseQuantity } from "../util/quantity.ts";

/** Plain-object shape of a CRI `Mount`. */
export interface CriMount {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  propagation: number;
}

/** Plain-object shape of a CRI `Device`: a device node the runtime gives a container. */
export interface CriDevice {
  containerPath: string;
  hostPath: string;
  /** cgroup device permissions: `r`, `w`, `m` (mknod). */
  permissions: string;
}

/** The outcome of setting up a pod's volumes. */
export type VolumeSetUp =
  | { ok: true }
  /** Upstream event reason `FailedMount`, with its message. */
  | { ok: false; reason: "FailedMount"; message: string };

/** What a container's mounts depend on besides the pod. */
export interface ContainerMountContext {
  /** The container's expanded `subPathExpr` of a mount (the caller knows the env). */
  expand(expr: string): string;
  /** Names of the pod's containers that are (or may be) running now. */
  running: ReadonlySet<string>;
}

/** Volumes of the pods on this node. */
export interface VolumeManager {
  /**
   * Makes every volume of `pod` ready (idempotent; called on each sync, so downwardAPI files
   * follow label and annotation changes). Never rejects for a pod's own mistakes.
   */
  setUpPod(pod: Pod): Promise<VolumeSetUp>;
  /**
   * The CRI mounts of `container` (after {@linkcode setUpPod}).
   * @throws {RangeError} with upstream's wording when a mount cannot be made.
   */
  containerMounts(
    pod: Pod,
    container: Container,
    context: ContainerMountContext,
  ): Promise<CriMount[]>;
  /**
   * The devices of the container's raw block volumes (`volumeDevices`), after
   * {@linkcode setUpPod}; absent or empty when the manager has none.
   */
  containerDevices?(pod: Pod, container: Container): CriDevice[];
  /** Removes the pod's volume directories (the pod is terminated); never rejects. */
  tearDownPod(pod: Pod): Promise<void>;
  /**
   * What each emptyDir of a set-up pod holds (for local storage eviction); empty before
   * set-up; never rejects.
   */
  emptyDirUsage?(pod: Pod): Promise<EmptyDirUsage[]>;
}

/** The measured content of one emptyDir. */
export interface EmptyDirUsage {
  volume: string;
  /** `medium: Memory` (tmpfs, counted as memory, not local storage). */
  memory: boolean;
  /** The `sizeLimit` as written in the spec, when set. */
  sizeLimit?: string;
  /** Bytes of the files under it. */
  bytes: number;
}

/** Options of {@linkcode createVolumeManager}. */
export interface VolumeManagerOptions {
  /** Kubelet `--root-dir`. */
  rootDir: string;
  /**
   * A tmpfs directory for `medium: Memory` emptyDirs (default `/run/kubelet.ts/memory`); its
   * file system must be tmpfs or ramfs, else such volumes fail to mount.
   */
  memoryDir?: string;
  /** Node allocatable for downwardAPI limits that are unset. */
  node?: NodeAllocatable;
  /**
   * How downwardAPI files are written (default: `symlinks`, upstream's `..data` layout, when the
   * process holds unscoped read and write, which `Deno.symlink` demands; else `files`).
   */
  writerLayout?: WriterLayout;
}

/** Dependencies of {@linkcode createVolumeManager}. */
export interface VolumeManagerDeps {
  logger: Logger;
  hostPathFs?: HostPathFs;
  subPathFs?: SubPathFs;
  /** The file system type of a path (default: `statfs`). */
  fsType?: (path: string) => Promise<number>;
  /** Puts downwardAPI volumes on a tmpfs of their own (upstream); omitted → on disk. */
  memoryVolumes?: MemoryVolumes;
  /**
   * Pins subPaths with bind mounts (upstream); without a binder a subPath is handed to the
   * runtime as a checked path, only while no running container can write its volume.
   */
  subPaths?: SubPathAccess;
}

const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;

function message(error: unknown): string {
  return errorMessage(error);
}

class DiskVolumeManager implements VolumeManager {
  #deps: VolumeManagerDeps;
  #options: VolumeManagerOptions;
  #hostPathFs: HostPathFs;
  #subPathFs: SubPathFs;
  #mounted = new Map<string, Map<string, MountedVolume>>();
  #layout: WriterLayout | undefined;

  constructor(deps: VolumeManagerDeps, options: VolumeManagerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#hostPathFs = deps.hostPathFs ?? denoHostPathFs;
    this.#subPathFs = deps.subPathFs ?? denoSubPathFs;
    if (deps.subPaths && "reason" in deps.subPaths) {
      deps.logger.warn(
        "subPath mounts are not pinned with a bind mount as upstream pins them: a container with a subPath starts only while no other running container of its pod can write that volume; run the cgroup agent or give the kubelet every permission (docs/volumes.md)",
        { reason: deps.subPaths.reason },
      );
    }
  }

  #writerLayout(): WriterLayout {
    if (this.#layout) return this.#layout;
    this.#layout = this.#options.writerLayout ?? writerLayoutForPermissions();
    if (this.#layout === "files") {
      this.#deps.logger.warn(
        "Path-scoped permissions forbid symlinks: downwardAPI volumes are written file by file (each file atomically, without ..data); grant unscoped --allow-read and --allow-write for upstream's layout (docs/volumes.md)",
      );
    }
    return this.#layout;
  }

  get #memoryDir(): string {
    return this.#options.memoryDir ?? DEFAULT_MEMORY_VOLUME_DIR;
  }

  async setUpPod(pod: Pod): Promise<VolumeSetUp> {
    const uid = pod.metadata.uid ?? "";
    let volumes;
    try {
      volumes = podVolumes(pod);
    } catch (error) {
      return { ok: false, reason: "FailedMount", message: message(error) };
    }
    const mounted = new Map<string, MountedVolume>();
    for (const volume of volumes) {
      try {
        mounted.set(
          volume.name,
          await this.#setUp(pod, volume.name, volume.source),
        );
      } catch (error) {
        const text = error instanceof UnsupportedSource
          ? error.message
          : `MountVolume.SetUp failed for volume "${volume.name}" : ${
            message(error)
          }`;
        this.#deps.logger.warn("Failed to set up a volume", {
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
          volume: volume.name,
          err: text,
        });
        return { ok: false, reason: "FailedMount", message: text };
      }
    }
    this.#mounted.set(uid, mounted);
    return { ok: true };
  }

  async #setUp(
    pod: Pod,
    name: string,
    source: VolumeSource,
  ): Promise<MountedVolume> {
    const uid = pod.metadata.uid ?? "";
    const root = this.#options.rootDir;
    switch (source.kind) {
      case "unsupported":
        throw new UnsupportedSource(
          unsupportedSourceMessage(name, source.source),
        );
      case "hostPath":
        await checkHostPathType(this.#hostPathFs, source.path, source.type);
        return {
          hostPath: source.path,
          readOnly: false,
          hostPathSource: source.path,
        };
      case "downwardAPI": {
        const dir = await this.#deps.memoryVolumes?.prepare(
          pod,
          escapePluginName(PLUGIN_NAMES.downwardAPI),
          name,
        ) ?? podVolumeDirectory(root, uid, {
          plugin: PLUGIN_NAMES.downwardAPI,
          name,
        });
        const payload = downwardApiPayload(pod, { name, ...source }, {
          ...(this.#options.node ? { node: this.#options.node } : {}),
        });
        const written = await writeAtomically(dir, payload, {
          layout: this.#writerLayout(),
        });
        const fsGroup = pod.spec.securityContext?.fsGroup;
        if (written && fsGroup !== undefined) {
          // containers mount it read-only: nothing can change it during the walk
          await setVolumeOwnership(dir, fsGroup, {
            readOnly: true,
            recursive: true,
          });
        }
        return { hostPath: dir, readOnly: true };
      }
      case "emptyDir": {
        const diskDir = podVolumeDirectory(root, uid, {
          plugin: PLUGIN_NAMES.emptyDir,
          name,
        });
        const memory = source.medium === "Memory";
        // a Memory volume may also be in the shared memory directory (an older pod's): only
        // then is that directory looked at, which a disk-only grant does not cover
        const fresh = !(await pathExists(diskDir)) &&
          !(memory &&
            await pathExists(
              memoryVolumeDirectory(this.#memoryDir, uid, name),
            ));
        const dir = memory
          ? await this.#memoryEmptyDir(pod, name, source.sizeLimit)
          : diskDir;
        // upstream mounts a new tmpfs for a Memory emptyDir, whose root is 1777 (sticky), and
        // its 0777 check leaves that bit; a disk emptyDir is a plain 0777 directory
        const mode = memory ? 0o1777 : 0o777;
        await Deno.mkdir(dir, { recursive: true, mode });
        const fsGroup = pod.spec.securityContext?.fsGroup;
        if (fresh && fsGroup !== undefined) {
          // only a new, empty directory: its content belongs to the containers
          await Deno.chmod(dir, mode);
          await setVolumeOwnership(dir, fsGroup, {
            readOnly: false,
            recursive: false,
          });
        } else if (fresh || fsGroup === undefined) {
          await Deno.chmod(dir, mode);
        }
        return { hostPath: dir, readOnly: false };
      }
    }
  }

  /**
   * A Memory emptyDir's directory: a tmpfs of its own under the pod's volumes (upstream
   * `setupTmpfs`) when `memoryVolumes` mounts one; else, or when the pod already has the
   * volume in the shared memory directory, that directory.
   */
  async #memoryEmptyDir(
    pod: Pod,
    name: string,
    sizeLimit: string | undefined,
  ): Promise<string> {
    const uid = pod.metadata.uid ?? "";
    const memoryVolumes = this.#deps.memoryVolumes;
    const shared = memoryVolumeDirectory(this.#memoryDir, uid, name);
    if (!memoryVolumes || await pathExists(shared)) {
      return await this.#memoryDirectory(uid, name);
    }
    const dir = await memoryVolumes.prepare(
      pod,
      escapePluginName(PLUGIN_NAMES.emptyDir),
      name,
      sizeLimit === undefined ? undefined : parseQuantity(sizeLimit).value,
    );
    const type = await (this.#deps.fsType ?? defaultFsType)(dir);
    if (type === TMPFS_MAGIC || type === RAMFS_MAGIC) return dir;
    await Deno.remove(dir).catch(() => {}); // the empty directory no tmpfs came on
    return await this.#memoryDirectory(uid, name);
  }

  async #memoryDirectory(uid: string, name: string): Promise<string> {
    const base = this.#memoryDir;
    await Deno.mkdir(base, { recursive: true, mode: 0o700 });
    const type = await (this.#deps.fsType ?? defaultFsType)(base);
    if (type !== TMPFS_MAGIC && type !== RAMFS_MAGIC) {
      throw new Error(
        `medium "Memory" needs a tmpfs: "${base}" is on a disk file system; mount a tmpfs there or run the kubelet where it is one (docs/volumes.md)`,
      );
    }
    await Deno.mkdir(`${base}/${uid}`, { recursive: true, mode: 0o750 });
    return memoryVolumeDirectory(base, uid, name);
  }

  async emptyDirUsage(pod: Pod): Promise<EmptyDirUsage[]> {
    const mounted = this.#mounted.get(pod.metadata.uid ?? "");
    if (!mounted) return [];
    let volumes;
    try {
      volumes = podVolumes(pod);
    } catch {
      return []; // set-up reported it
    }
    const out: EmptyDirUsage[] = [];
    for (const { name, source } of volumes) {
      const dir = mounted.get(name)?.hostPath;
      if (source.kind !== "emptyDir" || !dir) continue;
      out.push({
        volume: name,
        memory: source.medium === "Memory",
        ...(source.sizeLimit !== undefined
          ? { sizeLimit: source.sizeLimit }
          : {}),
        // an unreadable tree counts as empty: eviction needs a measurement it can trust
        bytes: await directoryUsage(dir, { self: true }).then(
          (u) => u.bytes,
          () => 0,
        ),
      });
    }
    return out;
  }

  async containerMounts(
    pod: Pod,
    container: Container,
    context: ContainerMountContext,
  ): Promise<CriMount[]> {
    const volumes = this.#mounted.get(pod.metadata.uid ?? "") ?? new Map();
    const out: CriMount[] = [];
    const privileged = container.securityContext?.privileged === true;
    const access = this.#deps.subPaths;
    const binds = access && "binds" in access ? access.binds : undefined;
    for (const [index, mount] of (container.volumeMounts ?? []).entries()) {
      const volume = volumeFor(volumes, mount, container);
      const propagation = mountPropagation(mount.mountPropagation, privileged);
      // the runtimes this kubelet speaks to report no handler features (CRI `Status`
      // runtime_handlers came with containerd 2.0), so no mount is recursively read-only
      // and one that must be is refused, as upstream refuses it there
      recursiveReadOnly(mount, false);
      const subPath = mount.subPathExpr
        ? context.expand(mount.subPathExpr)
        : mount.subPath ?? "";
      let hostPath = volume.hostPath;
      if (subPath !== "") {
        validateSubPath(subPath);
        // a pinned subPath is what was checked; an unpinned one only while no one can swap it
        const writers = binds ? [] : writersOf(pod, volumes, {
          name: mount.name,
          self: container.name,
          running: context.running,
        });
        if (writers.length > 0) {
          throw new RangeError(
            `subPath "${subPath}" of volume "${mount.name}" cannot be mounted safely while container "${
              writers[0]
            }" can write that volume and is running (it could swap a path component for a symlink before the runtime mounts it); mount the volume read-only there or give the containers separate volumes (docs/volumes.md)`,
          );
        }
        const root = await Deno.realPath(volume.hostPath).catch((error) => {
          throw hostPathDenied(error, volume.hostPath);
        });
        try {
          hostPath =
            (await resolveSubPath(this.#subPathFs, root, subPath)).path;
          if (binds) {
            hostPath = await binds.bindSubPath({
              uid: pod.metadata.uid ?? "",
              volume: mount.name,
              container: container.name,
              index,
            }, { volumePath: root, path: hostPath });
          }
        } catch (error) {
          if (!(error instanceof RangeError) && !binds) throw error;
          // as upstream makeMounts: the container's status names the mount, never host paths
          this.#deps.logger.error(
            "Failed to prepare subPath for volumeMount of the container",
            {
              containerName: container.name,
              volumeMountName: mount.name,
              err: message(error),
            },
          );
          throw new RangeError(
            `failed to prepare subPath for volumeMount "${mount.name}" of container "${container.name}"`,
            { cause: error },
          );
        }
      }
      out.push({
        containerPath: mount.mountPath,
        hostPath,
        readonly: mount.readOnly === true || volume.readOnly,
        propagation,
      });
    }
    return out;
  }

  async tearDownPod(pod: Pod): Promise<void> {
    const uid = pod.metadata.uid ?? "";
    this.#mounted.delete(uid);
    if (uid === "") return;
    // a mounted tmpfs would stop the removal below (busy) after emptying it
    await this.#deps.memoryVolumes?.release(uid);
    const access = this.#deps.subPaths;
    if (access && "binds" in access) {
      // the pins sit beside the volumes; one left mounted would keep the volume's files
      await access.binds.cleanSubPaths(uid).catch((error) =>
        this.#deps.logger.warn("Failed to clean a pod's subPath mounts", {
          pod: uid,
          err: message(error),
        })
      );
    }
    for (
      const path of [
        podVolumesDirectory(this.#options.rootDir, uid),
        `${this.#memoryDir.replace(/\/+$/, "")}/${uid}`,
      ]
    ) {
      try {
        // Deno's recursive remove does not follow symlinks a container left behind
        await Deno.remove(path, { recursive: true });
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) continue;
        this.#deps.logger.warn("Failed to remove a pod's volumes", {
          path,
          err: message(error),
        });
      }
    }
  }
}

class UnsupportedSource extends Error {}

async function defaultFsType(path: string): Promise<number> {
  return (await statfs(path)).type;
}

/** Creates the node's {@linkcode VolumeManager}. */
export function createVolumeManager(
  deps: VolumeManagerDeps,
  options: VolumeManagerOptions,
): VolumeManager {
  return new DiskVolumeManager(deps, options);
}
