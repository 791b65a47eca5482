/**
 * Device plugins (upstream `cm/devicemanager`, API v1beta1): registration,
 * the devices each plugin advertises, their allocation to containers and the
 * checkpoint. Other folders import only from here.
 *
 * @module
 */

export { DeviceManager } from "./device_manager.ts";
export { withDeviceAdmission } from "./admission.ts";
export type {
  DeviceManagerFiles,
  DeviceManagerOptions,
} from "./device_manager.ts";
export type { DeviceCapacity } from "./inventory.ts";
export type { DeviceRunOptions } from "./pod_devices.ts";
export {
  CHECKPOINT_NAME,
  DEVICE_PLUGIN_API_VERSION,
  DEVICE_PLUGIN_PATH,
  KUBELET_SOCKET_NAME,
} from "./registration.ts";
