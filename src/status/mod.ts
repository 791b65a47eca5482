/**
 * Status: the versioned pod status cache (the pod status itself is computed beside the pod code,
 * `src/pod/status/compute_pod_status.ts`, as upstream keeps it in kubelet_pods.go); node registration,
 * node status and the node lease.
 * `PodStatusSync` publishes the cached pod statuses to the API server (hooked in through
 * `PodStatusManager.onChange`) and deletes gracefully deleted pods once they terminated.
 *
 * Must not read global time (uses the injected `Clock`) and must not call the runtime.
 *
 * @module
 */

export type {
  PodStatusChange,
  PodStatusManager,
  VersionedPodStatus,
} from "./types.ts";
/** Creates the in-memory versioned pod status cache. */
export { createPodStatusManager, jsonEqual } from "./pod_status_manager.ts";
/** Node registration and status reporting to the API server, and the node lease heartbeat. */
export { createNodeAgent } from "./node_agent.ts";
export type {
  NodeAgent,
  NodeAgentDeps,
  NodeAgentOptions,
} from "./node_agent.ts";
export { createNodeFacts, resolveNodeIPs } from "./node_host_facts.ts";
export type { NodeFactsOptions, NodeRuntime } from "./node_host_facts.ts";
export type { NodeRegistrationOptions } from "./node_registration.ts";
export { goArch } from "./node_registration.ts";
export { formatBinaryQuantity } from "./node_status_setters.ts";
export type { NodeFacts } from "./node_status_setters.ts";
/** The API server half of the status manager: status patches and final deletes. */
export { PodStatusSync } from "./pod_status_sync.ts";
export type {
  PodStatusSyncDeps,
  PodStatusSyncOptions,
  StatusTarget,
} from "./pod_status_sync.ts";
export { podStatusPatch } from "./pod_status_patch.ts";
/** The pods with their cached statuses, rebuilt only after a change (`/pods`). */
export { podsWithStatus } from "./pods_with_status.ts";
export type { PodsWithStatus, StatusSource } from "./pods_with_status.ts";
/** Which container instance a log request reads, or upstream's words for why none. */
export { logContainer } from "./log_container.ts";
export type { LogContainer } from "./log_container.ts";
