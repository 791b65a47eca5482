/**
 * Starting the device manager (upstream's container manager starts it with
 * the kubelet) on `/var/lib/kubelet/device-plugins/kubelet.sock`: upstream's
 * fixed path (`pluginapi.KubeletSocket`), whatever `--root-dir` says, since
 * plugins dial that path. A failure to serve is logged as an error and the
 * kubelet runs without device plugins.
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { DEVICE_PLUGIN_PATH, DeviceManager } from "../device_plugin/mod.ts";
import { errorMessage } from "../util/error_message.ts";

/** The started manager, or undefined when there is none for this runtime or it failed. */
export async function startDeviceManager(
  deps: { clock: Clock; logger: Logger },
  options: { runtimeEndpoint: string },
): Promise<DeviceManager | undefined> {
  // a simulated runtime runs no containers that could use a device
  if (options.runtimeEndpoint.trim().toLowerCase().startsWith("sim://")) {
    return undefined;
  }
  const manager = new DeviceManager({
    pluginDir: DEVICE_PLUGIN_PATH,
    clock: deps.clock,
    logger: deps.logger.with({ component: "devicemanager" }),
  });
  if (Deno.permissions.querySync({ name: "net" }).state !== "granted") {
    // never silent: plugins register, but only sockets the lists name can be reached
    deps.logger.warn(
      "Device plugins under permission lists: a plugin is refused at registration unless the lists grant its socket (net unix:<path>, read and write); Deno has no directory grant for unix sockets: build the lists with --device-plugin-socket for sockets named in advance, or run with every permission",
      { pluginDir: manager.pluginDir },
    );
  }
  try {
    await manager.start();
    return manager;
  } catch (cause) {
    deps.logger.error(
      "Failed to start the device manager: device plugins cannot register",
      { socket: manager.socketPath, err: errorMessage(cause) },
    );
    await manager.stop().catch(() => {});
    return undefined;
  }
}
