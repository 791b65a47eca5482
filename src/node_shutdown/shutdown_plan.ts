/**
 * The decisions of graceful node shutdown, pure (upstream `nodeshutdown` pod manager):
 * the priority groups a configuration asks for, which group each pod falls in, the grace
 * period each pod gets, what logind's inhibit delay must allow, and the words the kubelet uses
 * (pod status, admission refusal, node readiness).
 *
 * @module
 */

import type { Pod } from "../api/mod.ts";

/** One priority group: pods from `priority` up to the next group's get `gracePeriodSeconds`. */
export interface ShutdownGroup {
  priority: number;
  gracePeriodSeconds: number;
}

/** A group with the pods it stops, in the order the groups run. */
export interface PodShutdownGroup extends ShutdownGroup {
  pods: Pod[];
}

/** Upstream `scheduling.DefaultPriorityWhenNoDefaultClassExists`. */
export const DEFAULT_POD_PRIORITY = 0;
/** Upstream `scheduling.SystemCriticalPriority`: where the critical pods' group starts. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Status reason of a pod stopped for the shutdown (upstream `nodeShutdownReason`). */
export const NODE_SHUTDOWN_POD_REASON = "Terminated";
/** Status message of such a pod (upstream `nodeShutdownMessage`). */
export const NODE_SHUTDOWN_POD_MESSAGE =
  "Pod was terminated in response to imminent node shutdown.";
/** Admission refusal while shutting down (upstream `NodeShutdownNotAdmittedReason`). */
export const NODE_SHUTDOWN_ADMIT_REASON = "NodeShutdown";
/** Its message (upstream `nodeShutdownNotAdmittedMessage`). */
export const NODE_SHUTDOWN_ADMIT_MESSAGE =
  "Pod was rejected as the node is shutting down.";
/** What the node's Ready condition says while shutting down (upstream `ShutdownStatus`). */
export const NODE_SHUTTING_DOWN_ERROR = "node is shutting down";
/** Reason of the node events (upstream `events.NodeShutdown`). */
export const NODE_SHUTDOWN_EVENT_REASON = "NodeShutdown";

/** The shutdown settings of the kubelet configuration, durations in ms. */
export interface ShutdownSettings {
  shutdownGracePeriodMs: number;
  shutdownGracePeriodCriticalPodsMs: number;
  byPodPriority: readonly {
    priority: number;
    shutdownGracePeriodSeconds: number;
  }[];
  /** Feature gate `GracefulNodeShutdownBasedOnPodPriority`. */
  byPriorityGate: boolean;
}

/**
 * Upstream `newPodManager` with `migrateConfig`: the by-priority list when the gate is on and
 * the list is set, else the two periods as a regular group (priority 0) and a critical group
 * (system-critical priority); sorted by priority. Empty: graceful shutdown is off.
 */
export function shutdownGroups(settings: ShutdownSettings): ShutdownGroup[] {
  let groups: ShutdownGroup[];
  if (settings.byPriorityGate && settings.byPodPriority.length > 0) {
    groups = settings.byPodPriority.map((g) => ({
      priority: g.priority,
      gracePeriodSeconds: g.shutdownGracePeriodSeconds,
    }));
  } else {
    const total = settings.shutdownGracePeriodMs;
    const critical = settings.shutdownGracePeriodCriticalPodsMs;
    if (total === 0 || total - critical < 0) return [];
    groups = [
      {
        priority: DEFAULT_POD_PRIORITY,
        gracePeriodSeconds: Math.trunc((total - critical) / 1000),
      },
      {
        priority: SYSTEM_CRITICAL_PRIORITY,
        gracePeriodSeconds: Math.trunc(critical / 1000),
      },
    ];
  }
  return groups.sort((a, b) => a.priority - b.priority);
}

/** Upstream `periodRequested`: the sum of the groups' periods, in seconds. */
export function requestedPeriodSeconds(
  groups: readonly ShutdownGroup[],
): number {
  return groups.reduce((sum, g) => sum + g.gracePeriodSeconds, 0);
}

/**
 * Upstream `groupByPriority`: each pod goes to the group with the highest priority not above
 * its own; a pod below every group goes to the first, one above every group to the last.
 * `groups` must be sorted by priority (as {@linkcode shutdownGroups} returns them).
 */
export function groupPods(
  groups: readonly ShutdownGroup[],
  pods: readonly Pod[],
): PodShutdownGroup[] {
  const out = groups.map((g) => ({ ...g, pods: [] as Pod[] }));
  if (out.length === 0) return out;
  for (const pod of pods) {
    const priority = pod.spec.priority ?? 0;
    let index = out.findIndex((g) => g.priority >= priority);
    if (index === -1) index = out.length - 1;
    else if (index > 0 && out[index]!.priority > priority) index--;
    out[index]!.pods.push(pod);
  }
  return out;
}

/** The pod's grace period: its own `terminationGracePeriodSeconds` when not longer than its group's. */
export function podShutdownGrace(pod: Pod, group: ShutdownGroup): number {
  const own = pod.spec.terminationGracePeriodSeconds;
  return own !== undefined && own !== null && own <= group.gracePeriodSeconds
    ? own
    : group.gracePeriodSeconds;
}

/** Upstream's state file (`graceful_node_shutdown_state` in the root dir). */
export interface ShutdownState {
  /** RFC 3339 time the shutdown started (Go's zero time while none did). */
  startTime: string;
  endTime: string;
}

/** Go's zero `time.Time` as its JSON encoding writes it. */
export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** The state file's name in the root dir (upstream `localStorageStateFile`). */
export const SHUTDOWN_STATE_FILE = "graceful_node_shutdown_state";
