/**
 * Starts the CSI node side of a kubelet joined to a cluster: makes `<root-dir>/plugins_registry`
 * and `<root-dir>/plugins` (as upstream does at start), runs the plugin watcher, and gives the
 * CSI volume host the pod volumes use.
 * @module
 */
import type { Secret, StorageApi } from "../api/mod.ts";
import { base64Bytes, type ObjectGetter } from "../objects/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { CsiVolumeHost } from "../storage/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import { createCsiNodeClient, createRegistrationClient } from "./csi_client.ts";
import { registerDriver, unregisterDriver } from "./csi_node_object.ts";
import { createCsiVolumes } from "./csi_volumes.ts";
import {
  createPluginWatcher,
  type DriverRegistry,
} from "./plugin_registration.ts";

/** The running CSI node side. */
export interface CsiNode {
  volumes: CsiVolumeHost;
  drivers: DriverRegistry;
  /** Stops the watcher (registered drivers stay in the CSINode, as upstream leaves them). */
  stop(): Promise<void>;
}

/** Starts watching `<rootDir>/plugins_registry`. */
export async function startCsiNode(
  deps: {
    logger: Logger;
    api: StorageApi;
    /** The Node's UID for the CSINode's owner reference (read late). */
    nodeUid?: () => string | undefined;
    /** The pods' Secrets, for the drivers' node stage and publish secrets. */
    objects?: ObjectGetter;
  },
  options: { rootDir: string; nodeName: string; periodMs?: number },
): Promise<CsiNode> {
  const logger = deps.logger.with({ component: "csi" });
  const registry = `${options.rootDir}/plugins_registry`;
  for (const dir of [registry, `${options.rootDir}/plugins`]) {
    await Deno.mkdir(dir, { recursive: true, mode: 0o750 }).catch((error) =>
      logger.warn("Failed to create a plugin directory", {
        dir,
        err: errorMessage(error),
      })
    );
  }
  const node = {
    name: options.nodeName,
    ...(deps.nodeUid ? { uid: deps.nodeUid } : {}),
  };
  const watcher = createPluginWatcher({
    logger,
    registration: (socket) => createRegistrationClient(socket),
    csi: (endpoint) => createCsiNodeClient(endpoint, { timeoutMs: 15_000 }),
    install: (name, info) => registerDriver(deps.api, node, name, info),
    uninstall: (name) => unregisterDriver(deps.api, node, name),
  }, { dir: registry });
  const stopping = new AbortController();
  const running = watcher.run(stopping.signal, options.periodMs);
  const volumes = createCsiVolumes({
    logger,
    drivers: watcher,
    api: deps.api,
    csi: (endpoint) => createCsiNodeClient(endpoint),
    ...(deps.objects ? { secret: secretReader(deps.objects) } : {}),
  }, { rootDir: options.rootDir, nodeName: options.nodeName });
  return {
    volumes,
    drivers: watcher,
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

/** A Secret's data as the CSI calls carry it: text values. */
function secretReader(objects: ObjectGetter) {
  return async (
    namespace: string,
    name: string,
  ): Promise<Record<string, string>> => {
    const secret = await objects.get("secrets", namespace, name) as Secret;
    const decoder = new TextDecoder();
    return Object.fromEntries(
      Object.entries(secret.data ?? {}).map((
        [key, value],
      ) => [key, decoder.decode(base64Bytes(value))]),
    );
  };
}
