/**
 * CSI volumes of pods, as upstream's CSI volume plugin mounts them: for a PV of a driver with
 * `STAGE_UNSTAGE_VOLUME`, `NodeStageVolume` at
 * `<root>/plugins/kubernetes.io/csi/<driver>/<sha256(volumeHandle)>/globalmount` once per node;
 * then `NodePublishVolume` at `<root>/pods/<uid>/volumes/kubernetes.io~csi/<spec>/mount` with
 * upstream's volume context (the PV's attributes, the pod's when the CSIDriver asks for
 * `podInfoOnMount`) and a `vol_data.json` beside it. A driver whose CSIDriver requires attach
 * waits for its VolumeAttachment's `status.attached`. Teardown reads the `vol_data.json` files
 * back (so pods of an earlier kubelet run are unpublished too), unpublishes, and unstages a
 * volume no other pod still publishes.
 * @module
 */
import {
  ApiNotFoundError,
  type CsiDriver,
  type Pod,
  type StorageApi,
} from "../api/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { CsiVolumeHost, CsiVolumeRequest } from "../storage/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import type {
  CsiAccessMode,
  CsiMountCapability,
  CsiNodeClient,
} from "./csi_client.ts";
import type { DriverRegistry } from "./plugin_registration.ts";
import { pathExists } from "../util/path_exists.ts";

/** `sha256` of `text` in hex, as Go's `%x` of `sha256.Sum256`. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Upstream `getAttachmentName`: `csi-<sha256(handle + driver + node)>`. */
export async function attachmentName(
  volumeHandle: string,
  driver: string,
  nodeName: string,
): Promise<string> {
  return `csi-${await sha256Hex(`${volumeHandle}${driver}${nodeName}`)}`;
}

/** Upstream `makeVolumeHandle` of an inline volume: `csi-<sha256(podUID + volume)>`. */
export async function inlineVolumeHandle(
  podUid: string,
  volume: string,
): Promise<string> {
  return `csi-${await sha256Hex(`${podUid}${volume}`)}`;
}

/** Upstream `makeDeviceMountPath`. */
export async function stagingPath(
  rootDir: string,
  driver: string,
  volumeHandle: string,
): Promise<string> {
  return `${rootDir}/plugins/kubernetes.io/csi/${driver}/${await sha256Hex(
    volumeHandle,
  )}/globalmount`;
}

/** The pod's CSI volume directory (its `mount` is the publish target). */
export function podCsiDirectory(
  rootDir: string,
  podUid: string,
  specName: string,
): string {
  return `${rootDir}/pods/${podUid}/volumes/kubernetes.io~csi/${specName}`;
}

/** Upstream's node access mode mapping (`getNodeV1AccessModeMapper`). */
export function csiAccessMode(
  accessModes: readonly string[] | undefined,
  singleNodeMultiWriter: boolean,
): CsiAccessMode {
  switch (accessModes?.[0] ?? "ReadWriteOnce") {
    case "ReadOnlyMany":
      return "MULTI_NODE_READER_ONLY";
    case "ReadWriteMany":
      return "MULTI_NODE_MULTI_WRITER";
    case "ReadWriteOncePod":
      return singleNodeMultiWriter
        ? "SINGLE_NODE_SINGLE_WRITER"
        : "SINGLE_NODE_WRITER";
    default:
      return singleNodeMultiWriter
        ? "SINGLE_NODE_MULTI_WRITER"
        : "SINGLE_NODE_WRITER";
  }
}

/** Upstream `getPodInfoAttrs`. */
export function podInfoAttributes(
  pod: Pod,
  inline: boolean,
): Record<string, string> {
  return {
    "csi.storage.k8s.io/pod.name": pod.metadata.name ?? "",
    "csi.storage.k8s.io/pod.namespace": pod.metadata.namespace ?? "",
    "csi.storage.k8s.io/pod.uid": pod.metadata.uid ?? "",
    "csi.storage.k8s.io/serviceAccount.name": pod.spec.serviceAccountName ??
      "",
    "csi.storage.k8s.io/ephemeral": String(inline),
  };
}

/**
 * Why the CSIDriver does not allow the volume's lifecycle mode (upstream
 * `supportsVolumeLifecycleMode`), or undefined.
 */
export function lifecycleProblem(
  driverName: string,
  driver: CsiDriver | undefined,
  inline: boolean,
): string | undefined {
  const mode = inline ? "Ephemeral" : "Persistent";
  if (!driver) {
    return inline
      ? `volume mode "Ephemeral" not supported by driver ${driverName} (no CSIDriver object)`
      : undefined;
  }
  const modes = driver.spec?.volumeLifecycleModes ?? ["Persistent"];
  if (modes.includes(mode)) return undefined;
  return `volume mode "${mode}" not supported by driver ${driverName} (only supports ${
    JSON.stringify(modes)
  })`;
}

/** What `vol_data.json` of a published volume holds (upstream's keys). */
interface VolumeData {
  specVolID: string;
  volumeHandle: string;
  driverName: string;
  nodeName: string;
  volumeLifecycleMode: string;
  attachmentID?: string;
}

/** Dependencies of {@linkcode createCsiVolumes}. */
export interface CsiVolumesDeps {
  logger: Logger;
  drivers: DriverRegistry;
  api: Pick<StorageApi, "getCsiDriver" | "getVolumeAttachment">;
  csi(endpoint: string): CsiNodeClient;
  /** A Secret's data, decoded (for `node*SecretRef`); omitted → such volumes fail. */
  secret?(namespace: string, name: string): Promise<Record<string, string>>;
}

/** Options of {@linkcode createCsiVolumes}. */
export interface CsiVolumesOptions {
  rootDir: string;
  nodeName: string;
}

/** Removes an empty directory or a file; a missing one is fine. */
async function removeOne(path: string): Promise<void> {
  try {
    // never recursive: a directory still mounted over keeps the driver's data
    await Deno.remove(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}

async function writeJson(path: string, data: unknown): Promise<void> {
  await Deno.writeTextFile(path, JSON.stringify(data), { mode: 0o640 });
}

/** The CSI volume host the storage volumes call. */
export function createCsiVolumes(
  deps: CsiVolumesDeps,
  options: CsiVolumesOptions,
): CsiVolumeHost {
  const { rootDir, nodeName } = options;
  const staging = new Map<string, Promise<void>>();

  const withDriver = async <T>(
    driverName: string,
    use: (client: CsiNodeClient) => Promise<T>,
  ): Promise<T> => {
    const driver = deps.drivers.get(driverName);
    if (!driver) {
      throw new Error(
        `kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name ${driverName} not found in the list of registered CSI drivers`,
      );
    }
    const client = deps.csi(driver.endpoint);
    try {
      return await use(client);
    } finally {
      await client.close();
    }
  };

  const csiDriverObject = async (
    name: string,
  ): Promise<CsiDriver | undefined> => {
    try {
      return await deps.api.getCsiDriver(name);
    } catch (error) {
      if (error instanceof ApiNotFoundError) return undefined;
      throw error;
    }
  };

  const secretData = async (
    ref: { name: string; namespace: string } | undefined,
  ): Promise<Record<string, string>> => {
    if (!ref) return {};
    if (!deps.secret) {
      throw new Error(
        `fetching secret ${ref.namespace}/${ref.name} failed: no API server`,
      );
    }
    try {
      return await deps.secret(ref.namespace, ref.name);
    } catch (error) {
      throw new Error(
        `fetching NodePublishSecretRef ${ref.namespace}/${ref.name} failed: ${
          errorMessage(error)
        }`,
      );
    }
  };

  /** The attachment's publish context, once attached (upstream `WaitForAttach`). */
  const attached = async (
    request: CsiVolumeRequest,
  ): Promise<Record<string, string>> => {
    const name = await attachmentName(
      request.source.volumeHandle,
      request.source.driver,
      nodeName,
    );
    let va;
    try {
      va = await deps.api.getVolumeAttachment(name);
    } catch (error) {
      throw new Error(
        `volume ${request.source.volumeHandle} has GET error for volume attachment ${name}: ${
          errorMessage(error)
        }`,
      );
    }
    if (va.metadata.deletionTimestamp) {
      throw new Error("volume attachment is being deleted");
    }
    if (va.status?.attached !== true) {
      const why = va.status?.attachError?.message;
      throw new Error(
        why
          ? `attachment for ${request.source.volumeHandle} failed: ${why}`
          : `volume ${request.source.volumeHandle} is not attached yet (VolumeAttachment ${name})`,
      );
    }
    return { ...(va.status.attachmentMetadata ?? {}) };
  };

  const stage = (
    client: CsiNodeClient,
    request: CsiVolumeRequest,
    path: string,
    capability: CsiMountCapability,
    publishContext: Record<string, string>,
  ): Promise<void> => {
    const key = path;
    const running = staging.get(key);
    if (running) return running;
    const work = (async () => {
      await Deno.mkdir(path, { recursive: true, mode: 0o750 });
      await writeJson(`${path.slice(0, path.lastIndexOf("/"))}/vol_data.json`, {
        driverName: request.source.driver,
        volumeHandle: request.source.volumeHandle,
      });
      const secrets = await secretData(request.source.nodeStageSecretRef);
      await client.nodeStageVolume({
        volumeId: request.source.volumeHandle,
        publishContext,
        stagingTargetPath: path,
        capability,
        secrets,
        volumeContext: request.source.volumeAttributes ?? {},
      });
    })();
    staging.set(key, work);
    // a failure is retried at the next sync; a success is idempotent to repeat anyway
    work.catch(() => {}).finally(() => staging.delete(key));
    return work;
  };

  /** Every published CSI volume of pod `uid`, read back from disk. */
  const published = async (
    uid: string,
  ): Promise<{ dir: string; data: VolumeData }[]> => {
    const base = `${rootDir}/pods/${uid}/volumes/kubernetes.io~csi`;
    const out: { dir: string; data: VolumeData }[] = [];
    try {
      for await (const entry of Deno.readDir(base)) {
        const dir = `${base}/${entry.name}`;
        try {
          const data = JSON.parse(
            await Deno.readTextFile(`${dir}/vol_data.json`),
          ) as VolumeData;
          out.push({ dir, data });
        } catch {
          out.push({
            dir,
            data: {
              specVolID: entry.name,
              volumeHandle: "",
              driverName: "",
              nodeName,
              volumeLifecycleMode: "",
            },
          });
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return out;
  };

  /** Whether any pod other than `exceptUid` still publishes the volume. */
  const inUseElsewhere = async (
    exceptUid: string,
    data: VolumeData,
  ): Promise<boolean> => {
    let uids: string[] = [];
    try {
      for await (const e of Deno.readDir(`${rootDir}/pods`)) uids.push(e.name);
    } catch {
      uids = [];
    }
    for (const uid of uids) {
      if (uid === exceptUid) continue;
      for (const other of await published(uid)) {
        if (
          other.data.driverName === data.driverName &&
          other.data.volumeHandle === data.volumeHandle
        ) return true;
      }
    }
    return false;
  };

  return {
    async setUp(pod: Pod, request: CsiVolumeRequest): Promise<string> {
      const uid = pod.metadata.uid ?? "";
      const driverName = request.source.driver;
      const driverObject = await csiDriverObject(driverName);
      const lifecycle = lifecycleProblem(
        driverName,
        driverObject,
        request.inline,
      );
      if (lifecycle) throw new Error(lifecycle);
      const volumeHandle = request.inline
        ? await inlineVolumeHandle(uid, request.specName)
        : request.source.volumeHandle;
      // no CSIDriver object: upstream attaches (the default of attachRequired)
      const attach = !request.inline &&
        (driverObject?.spec?.attachRequired ?? true);
      const publishContext = attach ? await attached(request) : {};
      return await withDriver(driverName, async (client) => {
        const caps = await client.nodeGetCapabilities();
        const pv = request.persistentVolume;
        const capability: CsiMountCapability = {
          accessMode: csiAccessMode(
            pv?.spec?.accessModes,
            caps.has("SINGLE_NODE_MULTI_WRITER"),
          ),
          fsType: request.source.fsType ?? "",
          mountFlags: pv?.spec?.mountOptions ?? [],
        };
        let stagingTargetPath = "";
        if (!request.inline && caps.has("STAGE_UNSTAGE_VOLUME")) {
          stagingTargetPath = await stagingPath(
            rootDir,
            driverName,
            volumeHandle,
          );
          await stage(
            client,
            request,
            stagingTargetPath,
            capability,
            publishContext,
          );
        }
        const dir = podCsiDirectory(rootDir, uid, request.specName);
        const target = `${dir}/mount`;
        await Deno.mkdir(dir, { recursive: true, mode: 0o750 });
        const data: VolumeData = {
          specVolID: request.specName,
          volumeHandle,
          driverName,
          nodeName,
          volumeLifecycleMode: request.inline ? "Ephemeral" : "Persistent",
          attachmentID: await attachmentName(
            volumeHandle,
            driverName,
            nodeName,
          ),
        };
        await writeJson(`${dir}/vol_data.json`, data);
        const volumeContext = {
          ...(request.source.volumeAttributes ?? {}),
          ...(driverObject?.spec?.podInfoOnMount
            ? podInfoAttributes(pod, request.inline)
            : {}),
        };
        await client.nodePublishVolume({
          volumeId: volumeHandle,
          publishContext,
          stagingTargetPath,
          targetPath: target,
          capability,
          readonly: request.readOnly,
          secrets: await secretData(request.source.nodePublishSecretRef),
          volumeContext,
        });
        return target;
      });
    },

    async tearDownPod(pod: Pod): Promise<boolean> {
      const uid = pod.metadata.uid ?? "";
      if (uid === "") return true;
      let clean = true;
      for (const { dir, data } of await published(uid)) {
        try {
          if (data.driverName === "") {
            // no record of the driver: only an empty, unmounted directory can go
            await removeOne(`${dir}/mount`);
            await removeOne(dir);
            continue;
          }
          await withDriver(data.driverName, async (client) => {
            const target = `${dir}/mount`;
            await client.nodeUnpublishVolume(data.volumeHandle, target);
            await removeOne(target);
            await removeOne(`${dir}/vol_data.json`);
            await removeOne(dir);
            if (data.volumeLifecycleMode === "Ephemeral") return;
            const caps = await client.nodeGetCapabilities();
            if (!caps.has("STAGE_UNSTAGE_VOLUME")) return;
            if (await inUseElsewhere(uid, data)) return;
            const path = await stagingPath(
              rootDir,
              data.driverName,
              data.volumeHandle,
            );
            if (!(await pathExists(path))) return;
            await client.nodeUnstageVolume(data.volumeHandle, path);
            await removeOne(path);
            const parent = path.slice(0, path.lastIndexOf("/"));
            await removeOne(`${parent}/vol_data.json`);
            await removeOne(parent);
          });
        } catch (error) {
          clean = false;
          deps.logger.error("Failed to tear down a CSI volume", {
            pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
            volume: data.specVolID,
            err: errorMessage(error),
          });
        }
      }
      return clean;
    },
  };
}
