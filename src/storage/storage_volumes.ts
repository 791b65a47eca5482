/**
 * `persistentVolumeClaim`, generic `ephemeral` and inline `csi` volumes for the volume manager.
 * A claim is resolved to its bound PersistentVolume once per pod (as upstream's populator
 * processes a pod once until it changes; a failure is retried at the next sync); the volume is
 * then handed to the inner manager as a hostPath volume: a `hostPath` PV's path (its `type`
 * checked there), a `local` PV's directory (or the pod's directory its block device is mounted
 * on), or the pod's CSI publish directory. A `local` PV of volume mode Block is a raw block
 * volume: its device goes to the runtime as a container device (`volumeDevices`). Mounts of a
 * read-only claim are read-only. Claims that are not usable yet fail the pod's mount with
 * upstream's `Unable to attach or mount volumes: ...` text.
 * @module
 */
import type {
  Container,
  CsiPersistentVolumeSource,
  PersistentVolume,
  Pod,
  Volume,
} from "../api/mod.ts";
import type { Logger } from "../log/mod.ts";
import {
  type ContainerMountContext,
  type CriDevice,
  type CriMount,
  hostPathDenied,
  podVolumeDirectory,
  setVolumeOwnership,
  type VolumeManager,
  type VolumeSetUp,
} from "../volume/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import {
  ClaimError,
  type ClaimReader,
  claimReference,
  resolveClaim,
} from "./claims.ts";
import { planPersistentSource, volumeModeOf } from "./persistent_sources.ts";

/** One CSI volume of a pod to stage and publish. */
export interface CsiVolumeRequest {
  /** The pod's volume name. */
  volume: string;
  /** The PV's name, or the pod's volume name for an inline volume (upstream's spec name). */
  specName: string;
  source: CsiPersistentVolumeSource;
  /** The claim's or the inline volume's `readOnly` (or the PV source's). */
  readOnly: boolean;
  /** An inline `csi:` volume (upstream's ephemeral lifecycle mode). */
  inline: boolean;
  /** The bound PV (absent for an inline volume). */
  persistentVolume?: PersistentVolume;
}

/** The CSI node side, as the storage volumes need it (omitted: CSI volumes are refused). */
export interface CsiVolumeHost {
  /** Stages (when the driver asks for it) and publishes; resolves to the pod's mount dir. */
  setUp(pod: Pod, request: CsiVolumeRequest): Promise<string>;
  /**
   * Unpublishes (and unstages when unused) every CSI volume of the pod; never rejects.
   * Resolves to false when a volume may still be mounted in the pod's directory.
   */
  tearDownPod(pod: Pod): Promise<boolean>;
}

/** A pod's directory for a local PV, by its parts. */
export interface LocalBlockTarget {
  uid: string;
  /** The PersistentVolume's name. */
  pv: string;
}

/**
 * Whoever can mount a local PV's block device and look below /dev: the cgroup agent for the
 * sandboxed kubelet, the kubelet itself with every permission.
 */
export interface LocalBlockDevices {
  /** Formats the device when it holds nothing, then mounts it on the pod's directory. */
  mountLocalBlock(
    target: LocalBlockTarget,
    mount: { device: string; fsType: string; readOnly: boolean },
  ): Promise<void>;
  /** Unmounts what is mounted on the pod's directory; false when nothing was. */
  unmountLocalBlock(target: LocalBlockTarget): Promise<boolean>;
  /** Whether a path below /dev is a block device (NotFound when nothing is there). */
  isBlockDevice(device: string): Promise<boolean>;
}

/** The mounter, or why there is none (named in the volume's error). */
export type LocalBlockAccess = { devices: LocalBlockDevices } | {
  reason: string;
};

/** Upstream's escaped plugin name of local volumes: the pod's block device mounts live there. */
const LOCAL_VOLUME_PLUGIN = "kubernetes.io/local-volume";

/** Dependencies of {@linkcode withStorageVolumes}. */
export interface StorageVolumesDeps {
  claims: ClaimReader;
  logger: Logger;
  csi?: CsiVolumeHost;
  /** `stat` of a local PV's path (default `Deno.stat`). */
  stat?: (path: string) => Promise<Deno.FileInfo>;
  /** Local PVs on block devices (omitted: refused). */
  localBlock?: LocalBlockAccess;
  /** Kubelet `--root-dir`: where a local PV's block device is mounted for a pod. */
  rootDir?: string;
}

/** A volume the wrapper set up: the host path the inner manager binds, or a raw device. */
interface Prepared {
  hostPath: string;
  type: string;
  readOnly: boolean;
  /** What pods share: a local PV's path (its directory or device). */
  source?: string;
  /** A raw block volume's device: no mount, a container device. */
  device?: string;
}

/** Upstream `WaitForAttachAndMount`'s error, as its `FailedMount` event prints it. */
export function unableToMountMessage(
  failed: readonly { volume: string; message: string }[],
): string {
  const names = failed.map((f) => f.volume).sort();
  return `Unable to attach or mount volumes: unmounted volumes=[${
    names.join(" ")
  }], unattached volumes=[], failed to process volumes=[${names.join(" ")}]: ${
    failed.map((f) => f.message).join("; ")
  }`;
}

function mountedNames(pod: Pod): { mounts: Set<string>; devices: Set<string> } {
  const mounts = new Set<string>();
  const devices = new Set<string>();
  const all: Container[] = [
    ...(pod.spec.initContainers ?? []),
    ...pod.spec.containers,
    ...((pod.spec as { ephemeralContainers?: Container[] })
      .ephemeralContainers ?? []),
  ];
  for (const c of all) {
    for (const m of c.volumeMounts ?? []) mounts.add(m.name);
    const raw = (c as { volumeDevices?: { name: string }[] }).volumeDevices;
    for (const d of raw ?? []) devices.add(d.name);
  }
  return { mounts, devices };
}

/** One entry of a container's `volumeDevices`. */
interface VolumeDevice {
  name: string;
  devicePath: string;
}

/** Whether the wrapper handles `volume`. */
function isStorageVolume(volume: Volume): boolean {
  return volume.persistentVolumeClaim !== undefined ||
    volume.ephemeral !== undefined || volume.csi !== undefined;
}

/** Wraps `inner` so the pod's storage volumes are resolved here and bound as hostPaths. */
export function withStorageVolumes(
  inner: VolumeManager,
  deps: StorageVolumesDeps,
): VolumeManager {
  const prepared = new Map<string, Map<string, Prepared>>();
  const views = new Map<string, Pod>();
  const stat = deps.stat ?? Deno.stat;

  const mountedByOthers = (pod: Pod, source: string): boolean => {
    for (const [uid, volumes] of prepared) {
      if (uid === pod.metadata.uid) continue;
      for (const v of volumes.values()) if (v.source === source) return true;
    }
    return false;
  };

  const blockDevices = (path: string): LocalBlockDevices => {
    const access = deps.localBlock;
    if (access && "devices" in access && deps.rootDir !== undefined) {
      return access.devices;
    }
    throw new Error(
      `local volume ${path}: a block device is looked at, formatted, mounted and mapped by the cgroup agent or by a kubelet with every permission (${
        access && "reason" in access ? access.reason : "neither is there"
      }; docs/volumes.md)`,
    );
  };

  /**
   * What a local PV's path is. Paths below /dev are looked at by whoever may (the sandboxed
   * kubelet cannot open /dev); anything else, and what is no block device there, by `stat`.
   */
  const localPathKind = async (
    path: string,
  ): Promise<"block" | "directory" | "other"> => {
    if (path.startsWith("/dev/")) {
      const block = await blockDevices(path).isBlockDevice(path).catch(
        (error) => {
          if (error instanceof Deno.errors.NotFound) {
            throw new Error(`path "${path}" does not exist`);
          }
          throw error;
        },
      );
      if (block) return "block";
    }
    const info = await stat(path).catch((error) => {
      throw hostPathDenied(error, path);
    });
    return info.isBlockDevice
      ? "block"
      : info.isDirectory
      ? "directory"
      : "other";
  };

  /** A Filesystem-mode local PV: its directory, or its device mounted for the pod. */
  const prepareLocal = async (
    pod: Pod,
    pvName: string,
    plan: { path: string; fsType: string },
    readOnly: boolean,
  ): Promise<Prepared> => {
    const kind = await localPathKind(plan.path);
    if (kind === "other") {
      throw new Error("only directory and block device are supported");
    }
    if (kind === "directory") {
      // a link to the directory (upstream's "dir-link" volumes) is followed once, here: the
      // fsGroup below and the runtime's bind both get the directory itself
      const real = await Deno.realPath(plan.path).catch((error) => {
        throw hostPathDenied(error, plan.path);
      });
      return { hostPath: real, type: "", readOnly, source: plan.path };
    }
    const uid = pod.metadata.uid ?? "";
    await blockDevices(plan.path).mountLocalBlock({ uid, pv: pvName }, {
      device: plan.path,
      fsType: plan.fsType,
      readOnly,
    });
    return {
      hostPath: podVolumeDirectory(deps.rootDir!, uid, {
        plugin: LOCAL_VOLUME_PLUGIN,
        name: pvName,
      }),
      type: "",
      readOnly,
      source: plan.path,
    };
  };

  /**
   * Unmounts the pod's local block devices (any left by an earlier run too) before its volume
   * directories are removed; false when one may still be mounted.
   */
  const releaseLocalBlocks = async (uid: string): Promise<boolean> => {
    if (deps.rootDir === undefined || uid === "") return true;
    const dir = podVolumeDirectory(deps.rootDir, uid, {
      plugin: LOCAL_VOLUME_PLUGIN,
      name: "",
    }).replace(/\/$/, "");
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return true;
      deps.logger.warn("Failed to list a pod's local volume mounts", {
        path: dir,
        err: errorMessage(error),
      });
      return false;
    }
    if (names.length === 0) return true;
    const access = deps.localBlock;
    if (!access || !("devices" in access)) return false;
    let clean = true;
    for (const pv of names) {
      await access.devices.unmountLocalBlock({ uid, pv }).catch((error) => {
        clean = false;
        deps.logger.warn("Failed to unmount a local volume's block device", {
          pod: uid,
          volume: pv,
          err: errorMessage(error),
        });
      });
    }
    return clean;
  };

  const csiSetUp = async (
    pod: Pod,
    request: CsiVolumeRequest,
  ): Promise<Prepared> => {
    if (!deps.csi) {
      throw new Error(
        "csi volumes need the CSI node side, which runs only with an API server (--kubeconfig)",
      );
    }
    const dir = await deps.csi.setUp(pod, request);
    return { hostPath: dir, type: "", readOnly: request.readOnly };
  };

  /** One volume; rejects with ClaimError (processing) or Error (mounting). */
  const prepare = async (
    pod: Pod,
    volume: Volume,
    used: { mounts: Set<string>; devices: Set<string> },
  ): Promise<Prepared> => {
    if (volume.csi !== undefined) {
      const csi = volume.csi as {
        driver?: string;
        readOnly?: boolean;
        fsType?: string;
        volumeAttributes?: Record<string, string>;
        nodePublishSecretRef?: { name: string };
      };
      const namespace = pod.metadata.namespace ?? "default";
      return await mounting(volume.name, () =>
        csiSetUp(pod, {
          volume: volume.name,
          specName: volume.name,
          source: {
            driver: csi.driver ?? "",
            volumeHandle: "",
            ...(csi.readOnly !== undefined ? { readOnly: csi.readOnly } : {}),
            ...(csi.fsType !== undefined ? { fsType: csi.fsType } : {}),
            ...(csi.volumeAttributes
              ? { volumeAttributes: csi.volumeAttributes }
              : {}),
            ...(csi.nodePublishSecretRef
              ? {
                nodePublishSecretRef: {
                  name: csi.nodePublishSecretRef.name,
                  namespace,
                },
              }
              : {}),
          },
          readOnly: csi.readOnly === true,
          inline: true,
        }));
    }
    const ref = claimReference(pod, volume)!;
    const resolved = await resolveClaim(deps.claims, pod, ref);
    const pv = resolved.volume;
    const mode = volumeModeOf(pv);
    if (used.mounts.has(volume.name) && mode !== "Filesystem") {
      throw new ClaimError(
        `volume ${volume.name} has volumeMode ${mode}, but is specified in volumeMounts`,
      );
    }
    if (used.devices.has(volume.name) && mode !== "Block") {
      throw new ClaimError(
        `volume ${volume.name} has volumeMode ${mode}, but is specified in volumeDevices`,
      );
    }
    const plan = planPersistentSource(pv);
    const pvName = pv.metadata.name ?? "";
    if (mode === "Block") {
      return await mounting(pvName, async () => {
        if (plan.kind === "refused") throw new Error(plan.message);
        if (plan.kind !== "local") {
          throw new Error(
            `raw block volumes of ${plan.kind} persistent volumes are not supported by this kubelet; a local PV on a block device is (docs/volumes.md)`,
          );
        }
        // upstream's local block mapper hands the device itself to the runtime
        if ((await localPathKind(plan.path)) !== "block") {
          throw new Error(`local volume ${plan.path} is not a block device`);
        }
        return {
          hostPath: "",
          type: "",
          readOnly: resolved.readOnly,
          source: plan.path,
          device: plan.path,
        };
      });
    }
    return await mounting(pvName, async () => {
      switch (plan.kind) {
        case "hostPath":
          return {
            hostPath: plan.path,
            type: plan.type,
            readOnly: resolved.readOnly,
          };
        case "local": {
          const local = await prepareLocal(
            pod,
            pvName,
            plan,
            resolved.readOnly,
          );
          const fsGroup = pod.spec.securityContext?.fsGroup;
          // upstream's local volume gives its directory to the pod's fsGroup on the first
          // writable mount only, when no other pod has it mounted. Only the directory itself:
          // what is below it was written by containers, which may still run (another pod's
          // after a kubelet restart, or this one's), and a walk that follows a symlink swapped
          // in by one would hand a host file to the group (Deno has no lchown).
          if (
            fsGroup !== undefined && !resolved.readOnly &&
            !mountedByOthers(pod, plan.path)
          ) {
            await setVolumeOwnership(local.hostPath, fsGroup, {
              readOnly: false,
              recursive: false,
            }).catch((error) => {
              throw hostPathDenied(error, local.hostPath);
            });
          }
          return local;
        }
        case "csi":
          return await csiSetUp(pod, {
            volume: volume.name,
            specName: pvName,
            source: plan.source,
            readOnly: resolved.readOnly || plan.source.readOnly === true,
            inline: false,
            persistentVolume: pv,
          });
        case "refused":
          throw new Error(plan.message);
      }
    });
  };

  return {
    async setUpPod(pod: Pod): Promise<VolumeSetUp> {
      const uid = pod.metadata.uid ?? "";
      const done = prepared.get(uid) ?? new Map<string, Prepared>();
      prepared.set(uid, done);
      const used = mountedNames(pod);
      const processing: { volume: string; message: string }[] = [];
      let mountFailure: string | undefined;
      const volumes: Volume[] = [];
      for (const volume of pod.spec.volumes ?? []) {
        if (!isStorageVolume(volume)) {
          volumes.push(volume);
          continue;
        }
        // upstream's populator skips a volume no container uses: its claim is never read
        if (!used.mounts.has(volume.name) && !used.devices.has(volume.name)) {
          continue;
        }
        let ready = done.get(volume.name);
        if (!ready) {
          try {
            ready = await prepare(pod, volume, used);
            done.set(volume.name, ready);
          } catch (error) {
            const text = errorMessage(error);
            deps.logger.warn("Error processing volume", {
              pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
              volumeName: volume.name,
              err: text,
            });
            if (error instanceof MountError) mountFailure ??= text;
            else processing.push({ volume: volume.name, message: text });
            continue;
          }
        }
        // a raw block volume is no mount: its device goes to the container as a device
        if (ready.device !== undefined) continue;
        volumes.push({
          name: volume.name,
          hostPath: { path: ready.hostPath, type: ready.type },
        });
      }
      if (processing.length > 0) {
        return {
          ok: false,
          reason: "FailedMount",
          message: unableToMountMessage(processing),
        };
      }
      if (mountFailure !== undefined) {
        return { ok: false, reason: "FailedMount", message: mountFailure };
      }
      const view: Pod = { ...pod, spec: { ...pod.spec, volumes } };
      views.set(uid, view);
      return await inner.setUpPod(view);
    },
    async containerMounts(
      pod: Pod,
      container: Container,
      context: ContainerMountContext,
    ): Promise<CriMount[]> {
      const uid = pod.metadata.uid ?? "";
      const view = views.get(uid) ?? pod;
      const mounts = await inner.containerMounts(view, container, context);
      const done = prepared.get(uid);
      const readOnly = new Set(
        (container.volumeMounts ?? []).filter((m) =>
          done?.get(m.name)?.readOnly === true
        ).map((m) => m.mountPath),
      );
      return mounts.map((m) =>
        readOnly.has(m.containerPath) ? { ...m, readonly: true } : m
      );
    },
    containerDevices(pod: Pod, container: Container): CriDevice[] {
      const done = prepared.get(pod.metadata.uid ?? "");
      const raw = (container as { volumeDevices?: VolumeDevice[] })
        .volumeDevices ?? [];
      return raw.flatMap((d) => {
        const ready = done?.get(d.name);
        if (ready?.device === undefined) return [];
        // upstream `makeBlockVolumes`: read and write with mknod, read only for a read-only claim
        return [{
          containerPath: d.devicePath,
          hostPath: ready.device,
          permissions: ready.readOnly ? "r" : "mrw",
        }];
      });
    },
    async tearDownPod(pod: Pod): Promise<void> {
      const uid = pod.metadata.uid ?? "";
      prepared.delete(uid);
      views.delete(uid);
      // the driver unpublishes before the pod's volume directories go; a removal through a
      // mount still in place would delete the driver's data
      if (deps.csi && !(await deps.csi.tearDownPod(pod))) {
        deps.logger.warn(
          "A CSI volume of the pod may still be mounted: its volume directories stay",
          { pod: `${pod.metadata.namespace}/${pod.metadata.name}` },
        );
        return;
      }
      // a removal through a mounted device would delete the volume's data
      if (!(await releaseLocalBlocks(uid))) {
        deps.logger.warn(
          "A local volume's block device may still be mounted in the pod's directory: its volume directories stay",
          { pod: `${pod.metadata.namespace}/${pod.metadata.name}` },
        );
        return;
      }
      await inner.tearDownPod(pod);
    },
    async emptyDirUsage(pod: Pod) {
      return await inner.emptyDirUsage?.(pod) ?? [];
    },
  };
}

/** A volume that was processed but could not be mounted (its own event text). */
class MountError extends Error {}

/** Runs a mount step; its failure reads `MountVolume.SetUp failed for volume "x" : ...`. */
async function mounting<T>(
  specName: string,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new MountError(
      `MountVolume.SetUp failed for volume "${specName}" : ${
        errorMessage(error)
      }`,
    );
  }
}
