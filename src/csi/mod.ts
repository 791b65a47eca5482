/**
 * The CSI node side: the plugin watcher on `<root-dir>/plugins_registry` (registration, the
 * node's CSINode entries), the gRPC clients of registration and CSI sockets, and the CSI volume
 * host that stages, publishes, unpublishes and unstages pods' CSI volumes.
 * @module
 */
export {
  createCsiNodeClient,
  createRegistrationClient,
  type CsiAccessMode,
  CsiCallError,
  type CsiMountCapability,
  type CsiNodeClient,
  type CsiNodeInfo,
  type PluginInfo,
  type PublishRequest,
  type RegistrationClient,
  type StageRequest,
} from "./csi_client.ts";
export {
  type CsiNodeApi,
  type CsiNodeRegistrationApi,
  driverEntry,
  installDriver,
  NODE_ID_ANNOTATION,
  nodeIdAnnotation,
  type NodeOwner,
  registerDriver,
  topologyCollision,
  uninstallDriver,
  unregisterDriver,
  withDriver,
  withoutDriver,
} from "./csi_node_object.ts";
export {
  createPluginWatcher,
  driverEndpoint,
  type DriverRegistry,
  highestSupportedVersion,
  type PluginWatcher,
  type PluginWatcherDeps,
  type RegisteredDriver,
} from "./plugin_registration.ts";
export {
  attachmentName,
  createCsiVolumes,
  csiAccessMode,
  type CsiVolumesDeps,
  type CsiVolumesOptions,
  inlineVolumeHandle,
  lifecycleProblem,
  podCsiDirectory,
  podInfoAttributes,
  sha256Hex,
  stagingPath,
} from "./csi_volumes.ts";
export { type CsiNode, startCsiNode } from "./csi_node.ts";
