/**
 * The kubelet's plugin watcher for CSI drivers (upstream pluginwatcher + reconciler + the CSI
 * plugin's registration handler): every socket in `<root-dir>/plugins_registry` is asked
 * `GetInfo`; a `CSIPlugin` speaking CSI 1.x is registered (its CSI socket is asked
 * `NodeGetInfo` and the node's CSINode gets the driver's entry), then told
 * `NotifyRegistrationStatus`. A socket that goes away takes its driver with it. The directory
 * is looked at every second, as upstream's reconciler loop runs.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import { errorMessage } from "../util/error_message.ts";
import type {
  CsiNodeClient,
  CsiNodeInfo,
  PluginInfo,
  RegistrationClient,
} from "./csi_client.ts";

/** A registered driver. */
export interface RegisteredDriver {
  name: string;
  /** The driver's CSI socket path. */
  endpoint: string;
  /** The registration socket it came from. */
  registrationSocket: string;
  /** The highest CSI version both sides speak. */
  version: string;
}

/** The registered drivers, by name (what the volume code looks up). */
export interface DriverRegistry {
  get(name: string): RegisteredDriver | undefined;
  names(): string[];
}

function compareParts(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return 0;
}

/**
 * Upstream `highestSupportedVersion`: the highest of `versions` with major version 1.
 * @throws {RangeError} with upstream's wording when none is.
 */
export function highestSupportedVersion(versions: readonly string[]): string {
  let best: { text: string; parts: number[] } | undefined;
  for (const text of versions) {
    const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text.trim());
    if (!m || m[1] !== "1") continue;
    const parts = [1, Number(m[2] ?? 0), Number(m[3] ?? 0)];
    if (!best || compareParts(parts, best.parts) > 0) best = { text, parts };
  }
  if (!best) {
    throw new RangeError(
      `none of the versions specified ${
        JSON.stringify(versions)
      } are supported. allowed versions: [1.0.0]`,
    );
  }
  return best.text;
}

/** The CSI socket of a plugin: its `endpoint`, else the registration socket itself. */
export function driverEndpoint(info: PluginInfo, socket: string): string {
  const endpoint = info.endpoint.replace(/^unix:\/\//, "");
  return endpoint === "" ? socket : endpoint;
}

/** Dependencies of {@linkcode createPluginWatcher}. */
export interface PluginWatcherDeps {
  logger: Logger;
  registration(socket: string): RegistrationClient;
  csi(endpoint: string): CsiNodeClient;
  /** Writes the driver's node id, topology labels and CSINode entry. */
  install(name: string, info: CsiNodeInfo): Promise<void>;
  /** Removes the driver's CSINode entry and node id. */
  uninstall(name: string): Promise<void>;
  /** The sockets now in the directory (default: a `readDir` keeping sockets). */
  listSockets?(dir: string): Promise<string[]>;
}

/** The watcher: a registry that {@linkcode PluginWatcher.run} keeps current. */
export interface PluginWatcher extends DriverRegistry {
  /** One pass over the directory (what `run` repeats). */
  reconcile(): Promise<void>;
  /** Reconciles every `periodMs` until `signal` aborts. */
  run(signal: AbortSignal, periodMs?: number): Promise<void>;
}

async function denoListSockets(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      // upstream skips hidden files
      if (entry.name.startsWith(".")) continue;
      const path = `${dir}/${entry.name}`;
      const info = await Deno.lstat(path).catch(() => undefined);
      if (info?.isSocket) out.push(path);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out.sort();
}

/** Creates the watcher of `dir` (`<root-dir>/plugins_registry`). */
export function createPluginWatcher(
  deps: PluginWatcherDeps,
  options: { dir: string },
): PluginWatcher {
  const drivers = new Map<string, RegisteredDriver>();
  /** Registered sockets, with the mtime they had (a socket made again registers again). */
  const seen = new Map<string, { name: string; mtime: number }>();
  const list = deps.listSockets ?? denoListSockets;
  const logger = deps.logger;

  const register = async (socket: string): Promise<string | undefined> => {
    const client = deps.registration(socket);
    try {
      let info: PluginInfo;
      try {
        info = await client.getInfo();
      } catch (error) {
        logger.error("Failed to get plugin info", {
          socket,
          err: errorMessage(error),
        });
        return undefined;
      }
      const fail = async (message: string) => {
        logger.error("Plugin registration failed", { socket, err: message });
        await client.notifyRegistrationStatus(false, message).catch(() => {});
        return undefined;
      };
      if (info.type !== "CSIPlugin") {
        return await fail(
          `no handler registered for plugin type: ${info.type} at socket ${socket}`,
        );
      }
      let version: string;
      try {
        version = highestSupportedVersion(info.supportedVersions);
      } catch (error) {
        return await fail(
          `validation failed for CSI Driver ${info.name} at endpoint ${info.endpoint}: ${
            errorMessage(error)
          }`,
        );
      }
      const endpoint = driverEndpoint(info, socket);
      let nodeInfo: CsiNodeInfo;
      const csi = deps.csi(endpoint);
      try {
        nodeInfo = await csi.nodeGetInfo();
        await deps.install(info.name, nodeInfo);
      } catch (error) {
        return await fail(
          `RegisterPlugin error -- plugin registration failed with err: ${
            errorMessage(error)
          }`,
        );
      } finally {
        await csi.close();
      }
      drivers.set(info.name, {
        name: info.name,
        endpoint,
        registrationSocket: socket,
        version,
      });
      logger.info("Register new plugin", {
        pluginName: info.name,
        endpoint,
        nodeID: nodeInfo.nodeId,
      });
      await client.notifyRegistrationStatus(true).catch((error) =>
        logger.warn("Failed to notify the plugin of its registration", {
          socket,
          err: errorMessage(error),
        })
      );
      return info.name;
    } finally {
      await client.close();
    }
  };

  const deregister = async (name: string) => {
    drivers.delete(name);
    logger.info("Deregister plugin", { pluginName: name });
    await deps.uninstall(name).catch((error) =>
      logger.warn("Failed to remove the driver from the CSINode", {
        pluginName: name,
        err: errorMessage(error),
      })
    );
  };

  const watcher: PluginWatcher = {
    get: (name) => drivers.get(name),
    names: () => [...drivers.keys()].sort(),
    async reconcile() {
      const sockets = await list(options.dir);
      const present = new Set(sockets);
      for (const [socket, entry] of [...seen]) {
        if (present.has(socket)) continue;
        seen.delete(socket);
        const still = drivers.get(entry.name);
        if (still && still.registrationSocket === socket) {
          await deregister(entry.name);
        }
      }
      for (const socket of sockets) {
        const mtime = (await Deno.lstat(socket).catch(() => undefined))?.mtime
          ?.getTime() ?? 0;
        const before = seen.get(socket);
        // a socket made again (a restarted registrar) registers again
        if (before && before.mtime === mtime) continue;
        const name = await register(socket);
        // a failed one is tried again at the next pass, as upstream's reconciler does
        if (name) seen.set(socket, { name, mtime });
      }
    },
    async run(signal, periodMs = 1_000) {
      while (!signal.aborted) {
        await watcher.reconcile().catch((error) =>
          logger.warn("Plugin watcher pass failed", {
            dir: options.dir,
            err: errorMessage(error),
          })
        );
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, periodMs);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve();
          }, { once: true });
        });
      }
    },
  };
  return watcher;
}
