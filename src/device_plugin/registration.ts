/**
 * What the kubelet's `Registration/Register` accepts (upstream
 * `devicemanager/plugin/v1beta1` server `Register`): the plugin's API version
 * must be one the kubelet speaks and its resource an extended resource name.
 * Pure; the texts are upstream's.
 *
 * @module
 */

import { isExtendedResourceName } from "../util/resource_names.ts";

/** The device plugin API version this kubelet speaks. */
export const DEVICE_PLUGIN_API_VERSION = "v1beta1";

/** Upstream `SupportedVersions`. */
export const SUPPORTED_VERSIONS: readonly string[] = [
  DEVICE_PLUGIN_API_VERSION,
];

/**
 * Upstream `DevicePluginPath`: where the kubelet serves `Registration` and
 * plugins put their sockets, fixed (not under `--root-dir`): plugins dial it.
 */
export const DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins";

/** The socket name every plugin registers with, in {@linkcode DEVICE_PLUGIN_PATH}. */
export const KUBELET_SOCKET_NAME = "kubelet.sock";

/** The allocation checkpoint, beside the socket. */
export const CHECKPOINT_NAME = "kubelet_internal_checkpoint";

/** What a registration names. */
export interface RegistrationRequest {
  version: string;
  endpoint: string;
  resourceName: string;
}

/** Go's `%q` of a string array: `["a" "b"]`. */
function quoteList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(" ")}]`;
}

/** Why a registration is refused, or undefined when it is accepted. */
export function registrationProblem(
  request: RegistrationRequest,
): string | undefined {
  if (!SUPPORTED_VERSIONS.includes(request.version)) {
    return `requested API version ${
      JSON.stringify(request.version)
    } is not supported by kubelet. Supported version is ${
      quoteList(SUPPORTED_VERSIONS)
    }`;
  }
  if (!isExtendedResourceName(request.resourceName)) {
    return `the ResourceName ${
      JSON.stringify(request.resourceName)
    } is invalid`;
  }
  // Upstream joins the endpoint to the directory as given; a name with a
  // slash would reach outside it, which no plugin needs.
  if (
    request.endpoint === "" || request.endpoint.includes("/") ||
    request.endpoint === "." || request.endpoint === ".."
  ) {
    return `invalid endpoint ${
      JSON.stringify(request.endpoint)
    }: a socket file name in the device plugin directory is expected`;
  }
  return undefined;
}
