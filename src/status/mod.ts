/**
 * Status: the versioned pod status cache (the pod status itself is computed beside the pod code,
 * `src/pod/compute_pod_status.ts`, as upstream keeps it in kubelet_pods.go); node registration,
 * node status and the node lease.
 * Pod statuses are not published to an API server yet; a publisher would hook in through
 * `PodStatusManager.onChange`.
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
export { createNodeFacts } from "./node_host_facts.ts";
export type { NodeFactsOptions, NodeRuntime } from "./node_host_facts.ts";
export type { NodeRegistrationOptions } from "./node_registration.ts";
export { goArch } from "./node_registration.ts";
