/**
 * configMap, secret and projected volumes (other than downwardAPI-only ones) for the volume
 * manager: each sync the payload is rebuilt from the pod's objects and tokens
 * (`collectVolumePayload`) and written with the volume area's atomic writer under
 * `<root>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>` (secret and projected ones on a
 * tmpfs of their own when `memoryVolumes` can mount one); the volume manager then sees that
 * directory as a hostPath volume and mounts it read-only, as upstream mounts these.
 * Edits of the objects therefore reach the files at the next sync of the pod.
 * @module
 */
import type { Container, Pod, Volume } from "../../api/mod.ts";
import {
  collectVolumePayload,
  type ObjectGetter,
  type ObjectVolumeSource,
  type Payload,
  type TokenSource,
} from "../../objects/mod.ts";
import {
  type ContainerMountContext,
  type CriMount,
  type DownwardApiItem,
  downwardApiPayload,
  escapePluginName,
  type MemoryVolumes,
  type PayloadFile,
  podVolumeDirectory,
  setVolumeOwnership,
  type VolumeManager,
  type VolumeSetUp,
  writeAtomically,
  writerLayoutForPermissions,
} from "../../volume/mod.ts";
import { errorMessage } from "../../util/error_message.ts";

const PLUGIN: Record<string, string> = {
  configMap: "kubernetes.io/configmap",
  secret: "kubernetes.io/secret",
  projected: "kubernetes.io/projected",
};

/** Whether this wrapper handles the volume (a projected volume of downwardAPI only is not). */
function objectKind(volume: Volume): string | undefined {
  if (volume.configMap) return "configMap";
  if (volume.secret) return "secret";
  const projected = volume.projected as ObjectVolumeSource["projected"];
  if (projected?.sources?.some((s) => !s.downwardAPI)) return "projected";
  return undefined;
}

function writable(payload: Payload): Map<string, PayloadFile> {
  return new Map(
    [...payload].map(([path, f]) => [path, {
      data: f.data,
      mode: f.mode,
    }]),
  );
}

/**
 * Wraps `inner` so the pod's object volumes are written here and handed to it as hostPath
 * volumes; mounts of them are read-only.
 */
export function withObjectVolumes(
  inner: VolumeManager,
  deps: {
    objects: ObjectGetter;
    tokens: TokenSource;
    /** Puts secret and projected volumes on a tmpfs (upstream); omitted → on disk. */
    memoryVolumes?: MemoryVolumes;
  },
  options: { rootDir: string },
): VolumeManager {
  /** The pod as the inner manager sees it: object volumes replaced by their directories. */
  const rewritten = new Map<string, Pod>();
  const objectVolumeNames = (pod: Pod) =>
    new Set((pod.spec.volumes ?? []).filter(objectKind).map((v) => v.name));
  return {
    async setUpPod(pod: Pod): Promise<VolumeSetUp> {
      const uid = pod.metadata.uid ?? "";
      const volumes: Volume[] = [];
      for (const volume of pod.spec.volumes ?? []) {
        const kind = objectKind(volume);
        if (!kind) {
          volumes.push(volume);
          continue;
        }
        const got = await collectVolumePayload(
          {
            ...deps,
            downwardAPI: (items, defaultMode) =>
              downwardApiPayload(pod, {
                name: volume.name,
                items: items as DownwardApiItem[],
                defaultMode,
              }),
          },
          pod,
          volume as ObjectVolumeSource,
        );
        const message = got && "error" in got ? got.error : undefined;
        const dir = podVolumeDirectory(options.rootDir, uid, {
          plugin: PLUGIN[kind]!,
          name: volume.name,
        });
        try {
          if (message !== undefined) throw new Error(message);
          if (got && "payload" in got) {
            await deps.memoryVolumes?.prepare(
              pod,
              escapePluginName(PLUGIN[kind]!),
              volume.name,
            );
            const written = await writeAtomically(dir, writable(got.payload), {
              layout: writerLayoutForPermissions(),
            });
            const fsGroup = pod.spec.securityContext?.fsGroup;
            if (written && fsGroup !== undefined) {
              // containers mount it read-only: nothing can change it during the walk
              await setVolumeOwnership(dir, fsGroup, {
                readOnly: true,
                recursive: true,
              });
            }
          }
        } catch (e) {
          return {
            ok: false,
            reason: "FailedMount",
            message: `MountVolume.SetUp failed for volume "${volume.name}" : ${
              errorMessage(e)
            }`,
          };
        }
        volumes.push({
          name: volume.name,
          hostPath: { path: dir, type: "Directory" },
        });
      }
      const view = withObjectMountsReadOnly(
        { ...pod, spec: { ...pod.spec, volumes } },
        objectVolumeNames(pod),
      );
      rewritten.set(uid, view);
      return await inner.setUpPod(view);
    },
    async containerMounts(
      pod: Pod,
      container: Container,
      context: ContainerMountContext,
    ): Promise<CriMount[]> {
      const view = rewritten.get(pod.metadata.uid ?? "") ?? pod;
      const mounts = await inner.containerMounts(view, container, context);
      const objectVolumes = objectVolumeNames(pod);
      const readOnlyPaths = new Set(
        (container.volumeMounts ?? []).filter((m) => objectVolumes.has(m.name))
          .map((m) => m.mountPath),
      );
      return mounts.map((m) =>
        readOnlyPaths.has(m.containerPath) ? { ...m, readonly: true } : m
      );
    },
    containerDevices(pod: Pod, container: Container) {
      return inner.containerDevices?.(pod, container) ?? [];
    },
    async tearDownPod(pod: Pod): Promise<void> {
      rewritten.delete(pod.metadata.uid ?? "");
      await inner.tearDownPod(pod);
    },
    async emptyDirUsage(pod: Pod) {
      return await inner.emptyDirUsage?.(pod) ?? [];
    },
  };
}

/**
 * The pod with every container's mount of an object volume read-only, as containers get them:
 * the volume manager then never counts such a mount as a writer that could swap a subPath's
 * components (a configMap subPath restarts beside a container mounting the whole volume).
 */
function withObjectMountsReadOnly(pod: Pod, names: ReadonlySet<string>): Pod {
  const readOnly = <C extends { volumeMounts?: Container["volumeMounts"] }>(
    list: C[] | undefined,
  ): C[] | undefined =>
    list?.map((c) => ({
      ...c,
      volumeMounts: c.volumeMounts?.map((m) =>
        names.has(m.name) ? { ...m, readOnly: true } : m
      ),
    }));
  const spec = { ...pod.spec, containers: readOnly(pod.spec.containers)! };
  const inits = readOnly(pod.spec.initContainers);
  if (inits) spec.initContainers = inits;
  const ephemeral = readOnly(pod.spec.ephemeralContainers);
  if (ephemeral) spec.ephemeralContainers = ephemeral;
  return { ...pod, spec };
}
