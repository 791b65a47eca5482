/**
 * Pod status: computing the v1 PodStatus from the runtime's view (phase, conditions, container
 * statuses) and the versioned pod status cache; node registration, node status and the node lease.
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
/** Builds the v1 PodStatus from the runtime view, start failures and the previous status. */
export { computePodStatus } from "./compute_pod_status.ts";
export type { ComputePodStatusOptions } from "./compute_pod_status.ts";
/** Pod phase (Pending/Running/Succeeded/Failed) from container statuses. */
export { computePodPhase } from "./pod_phase.ts";
export type { PodPhaseOptions } from "./pod_phase.ts";
/** Creates the in-memory versioned pod status cache. */
export { createPodStatusManager, jsonEqual } from "./pod_status_manager.ts";
/** Marks a terminated pod's status final (missing terminations → ContainerStatusUnknown). */
export { terminatePodStatus } from "./terminate.ts";
export { mergeConditions, rfc3339 } from "./conditions.ts";
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
