/**
 * The node's CSINode object as upstream's node info manager keeps it: one entry per registered
 * driver (`name`, `nodeID`, sorted `topologyKeys`, `allocatable.count` when the driver limits
 * volumes), created owned by the Node. The entry changes are pure; {@linkcode installDriver} and
 * {@linkcode uninstallDriver} read, change and write the object, retrying on conflicts.
 * @module
 */
import {
  ApiConflictError,
  ApiNotFoundError,
  type CsiNode,
  type CsiNodeDriver,
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
