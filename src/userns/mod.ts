/**
 * Pod user namespaces (`spec.hostUsers: false`, upstream's user namespace manager): the ID
 * range each pod gets, its record in the pod directory, the CRI option sent for it, and the
 * refusal when the runtime handler has no user namespace support.
 * @module
 */
export {
  type IdMapping,
  MAPPINGS_FILE,
  mappingsFileText,
  parseMappingsFile,
  type PodIdRange,
} from "./id_mappings.ts";
export {
  DEFAULT_KUBELET_ID_RANGE,
  IDS_PER_POD_UNIT,
  type KubeletIdRange,
} from "./id_slots.ts";
export {
  type HandlerFeatures,
  handlerRefusal,
  NODE_USER_NAMESPACE,
  type UserNamespaceInit,
} from "./pod_user_namespace.ts";
export {
  createUserNamespaceManager,
  type HandlerFeatureSource,
  type PodDirFiles,
  type UserNamespaceManager,
  type UserNamespacePod,
} from "./userns_manager.ts";
export { podDirFiles } from "./pod_dir_files.ts";
export { handlersOf, statusHandlerSource } from "./runtime_handlers.ts";
export {
  KUBELET_USER,
  kubeletIdRange,
  type KubeletIdRangeHost,
  parseGetSubIdsOutput,
  SYSTEM_ID_RANGE_HOST,
} from "./kubelet_id_range.ts";
