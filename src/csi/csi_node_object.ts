/**
 * What upstream's node info manager writes for a registered driver: the Node's
 * `csi.volume.kubernetes.io/nodeid` annotation (a JSON map of driver → node id) and the
 * driver's topology segments as Node labels, then the CSINode's entry (`name`, `nodeID`,
 * sorted `topologyKeys`, `allocatable.count` when the driver limits volumes), the CSINode
 * created owned by the Node. The changes are pure; {@linkcode registerDriver} and
 * {@linkcode unregisterDriver} read, change and write, retrying on conflicts.
 * @module
 */
import {
  ApiConflictError,
  ApiNotFoundError,
  type CsiNode,
  type CsiNodeDriver,
  type ObjectMeta,
  type StorageApi,
} from "../api/mod.ts";
import type { CsiNodeInfo } from "./csi_client.ts";

/** Upstream's driver entry for `info`. */
export function driverEntry(name: string, info: CsiNodeInfo): CsiNodeDriver {
  return {
    name,
    nodeID: info.nodeId,
    topologyKeys: Object.keys(info.topology).sort(),
    ...(info.maxVolumesPerNode > 0
      ? { allocatable: { count: info.maxVolumesPerNode } }
      : {}),
  };
}

/** `drivers` with `entry` in place of any entry of the same name (order kept). */
export function withDriver(
  drivers: readonly CsiNodeDriver[],
  entry: CsiNodeDriver,
): CsiNodeDriver[] {
  const at = drivers.findIndex((d) => d.name === entry.name);
  if (at < 0) return [...drivers, entry];
  return drivers.map((d, i) => i === at ? entry : d);
}

/** `drivers` without the entry named `name`. */
export function withoutDriver(
  drivers: readonly CsiNodeDriver[],
  name: string,
): CsiNodeDriver[] {
  return drivers.filter((d) => d.name !== name);
}

/** What writing the CSINode needs. */
export type CsiNodeApi = Pick<
  StorageApi,
  "getCsiNode" | "createCsiNode" | "updateCsiNode"
>;

/** The Node that owns the CSINode (upstream sets this owner reference). */
export interface NodeOwner {
  name: string;
  /** The Node's UID; the owner reference is left out without it. */
  uid?: () => string | undefined;
}

const ATTEMPTS = 5;

async function change(
  api: CsiNodeApi,
  node: NodeOwner,
  edit: (drivers: readonly CsiNodeDriver[]) => CsiNodeDriver[],
): Promise<void> {
  for (let attempt = 1;; attempt++) {
    let current: CsiNode | undefined;
    try {
      current = await api.getCsiNode(node.name);
    } catch (error) {
      if (!(error instanceof ApiNotFoundError)) throw error;
    }
    try {
      if (!current) {
        const uid = node.uid?.();
        await api.createCsiNode({
          metadata: {
            name: node.name,
            ...(uid
              ? {
                ownerReferences: [{
                  apiVersion: "v1",
                  kind: "Node",
                  name: node.name,
                  uid,
                }],
              }
              : {}),
          },
          spec: { drivers: edit([]) },
        });
        return;
      }
      await api.updateCsiNode({
        ...current,
        spec: { ...current.spec, drivers: edit(current.spec.drivers ?? []) },
      });
      return;
    } catch (error) {
      // another writer won the race (or created it first): read again
      const retry = error instanceof ApiConflictError ||
        (error as { code?: number }).code === 409;
      if (!retry || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** Adds or replaces the driver's entry in the node's CSINode (creating it when missing). */
export async function installDriver(
  api: CsiNodeApi,
  node: NodeOwner,
  entry: CsiNodeDriver,
): Promise<void> {
  await change(api, node, (drivers) => withDriver(drivers, entry));
}

/** Removes the driver's entry from the node's CSINode. */
export async function uninstallDriver(
  api: CsiNodeApi,
  node: NodeOwner,
  name: string,
): Promise<void> {
  await change(api, node, (drivers) => withoutDriver(drivers, name));
}

/** The Node annotation with each registered driver's node id. */
export const NODE_ID_ANNOTATION = "csi.volume.kubernetes.io/nodeid";

/**
 * The annotation's new value with `driver` set to `nodeId` (or removed when `nodeId` is
 * undefined); undefined when no driver is left. Keys sorted, as Go's `json.Marshal` of a map.
 */
export function nodeIdAnnotation(
  current: string | undefined,
  driver: string,
  nodeId: string | undefined,
): string | undefined {
  let ids: Record<string, string> = {};
  try {
    const parsed = current ? JSON.parse(current) : {};
    if (parsed && typeof parsed === "object") ids = parsed;
  } catch {
    // a corrupt annotation is rewritten, as upstream overwrites what it cannot parse
  }
  if (nodeId === undefined) delete ids[driver];
  else ids[driver] = nodeId;
  const keys = Object.keys(ids).sort();
  if (keys.length === 0) return undefined;
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, ids[k]])));
}

/** Upstream's error when a topology segment disagrees with a label the Node has. */
export function topologyCollision(
  labels: Readonly<Record<string, string>>,
  topology: Readonly<Record<string, string>>,
): string | undefined {
  for (const [key, value] of Object.entries(topology).sort()) {
    const existing = labels[key];
    if (existing !== undefined && existing !== value) {
      return `detected topology value collision: driver reported "${key}":"${value}" but existing label is "${key}":"${existing}"`;
    }
  }
  return undefined;
}

/** What writing the node's CSI metadata needs. */
export type CsiNodeRegistrationApi =
  & CsiNodeApi
  & Pick<StorageApi, "getNodeMetadata" | "patchNodeMetadata">;

async function patchNode(
  api: CsiNodeRegistrationApi,
  node: string,
  edit: (meta: ObjectMeta) => {
    labels?: Record<string, string>;
    annotations?: Record<string, string | null>;
  } | undefined,
): Promise<void> {
  for (let attempt = 1;; attempt++) {
    const meta = await api.getNodeMetadata(node);
    const change = edit(meta);
    if (!change) return;
    try {
      await api.patchNodeMetadata(
        node,
        {
          ...(meta.resourceVersion
            ? { resourceVersion: meta.resourceVersion }
            : {}),
          ...change,
        } as Parameters<StorageApi["patchNodeMetadata"]>[1],
      );
      return;
    } catch (error) {
      const retry = error instanceof ApiConflictError ||
        (error as { code?: number }).code === 409;
      if (!retry || attempt >= ATTEMPTS) throw error;
    }
  }
}

/**
 * Upstream `InstallCSIDriver`: the Node's node id annotation and topology labels, then the
 * CSINode entry.
 * @throws {Error} on a topology label collision (the registration fails, as upstream's).
 */
export async function registerDriver(
  api: CsiNodeRegistrationApi,
  node: NodeOwner,
  name: string,
  info: CsiNodeInfo,
): Promise<void> {
  await patchNode(api, node.name, (meta) => {
    const collision = topologyCollision(meta.labels ?? {}, info.topology);
    if (collision) throw new Error(collision);
    const current = meta.annotations?.[NODE_ID_ANNOTATION];
    const next = nodeIdAnnotation(current, name, info.nodeId);
    const labelsMissing = Object.entries(info.topology).some(([k, v]) =>
      meta.labels?.[k] !== v
    );
    if (next === current && !labelsMissing) return undefined;
    return {
      ...(labelsMissing ? { labels: { ...info.topology } } : {}),
      ...(next !== current
        ? { annotations: { [NODE_ID_ANNOTATION]: next! } }
        : {}),
    };
  });
  await installDriver(api, node, driverEntry(name, info));
}

/** Upstream `UninstallCSIDriver`: the CSINode entry and the node id go; labels stay. */
export async function unregisterDriver(
  api: CsiNodeRegistrationApi,
  node: NodeOwner,
  name: string,
): Promise<void> {
  await uninstallDriver(api, node, name);
  await patchNode(api, node.name, (meta) => {
    const current = meta.annotations?.[NODE_ID_ANNOTATION];
    if (current === undefined) return undefined;
    const next = nodeIdAnnotation(current, name, undefined);
    if (next === current) return undefined;
    // null deletes the key in a strategic merge patch
    return { annotations: { [NODE_ID_ANNOTATION]: next ?? null } };
  });
}
