/**
 * Graceful node shutdown (upstream `pkg/kubelet/nodeshutdown`): a logind "delay" inhibitor
 * lock, and on `PrepareForShutdown` the pods stopped by priority group within their grace
 * periods, new pods refused and the node reported not ready. Owns the decisions and their
 * sequencing; logind itself is reached through `src/systemd`, pods through the functions the
 * composition root passes in. It never talks to the runtime or the API server itself.
 *
 * @module
 */

export {
  createNodeShutdownManager,
  type NodeShutdownDeps,
  type NodeShutdownManager,
  type NodeShutdownOptions,
  type ShutdownLock,
  type ShutdownLogind,
} from "./shutdown_manager.ts";
export {
  DEFAULT_POD_PRIORITY,
  groupPods,
  NODE_SHUTDOWN_ADMIT_MESSAGE,
  NODE_SHUTDOWN_ADMIT_REASON,
  NODE_SHUTDOWN_EVENT_REASON,
  NODE_SHUTDOWN_POD_MESSAGE,
  NODE_SHUTDOWN_POD_REASON,
  NODE_SHUTTING_DOWN_ERROR,
  podShutdownGrace,
  type PodShutdownGroup,
  requestedPeriodSeconds,
  SHUTDOWN_STATE_FILE,
  type ShutdownGroup,
  shutdownGroups,
  type ShutdownSettings,
  type ShutdownState,
  SYSTEM_CRITICAL_PRIORITY,
} from "./shutdown_plan.ts";
export { loadShutdownState, storeShutdownState } from "./shutdown_state.ts";
