/**
 * The plan for one sync of one pod, as the deciders (`pod_actions.ts`,
 * `init_container_actions.ts`) write it and the executors
 * (`execute_pod_actions.ts`, `pod_kill.ts`) carry it out.
 *
 * @module
 */

import type { ProbeResult } from "../probes/probe_results.ts";
import type { Container } from "../types.ts";

/** Why a container is being killed (kubelet's `containerKillReason`). */
export type KillReason = "" | "StartupProbe" | "LivenessProbe" | "Unknown";

/** A running (or unknown-state) container instance that must be stopped. */
export interface ContainerToKill {
  containerId: string;
  name: string;
  container: Container;
  message: string;
  reason: KillReason;
}

/** The plan for one sync of one pod. */
export interface PodActions {
  /** Stop every container and sandbox of the pod first (sandbox change or pod finished). */
  killPod: boolean;
  /** Create a new sandbox (after killing the old one). */
  createSandbox: boolean;
  /** The sandbox to use when not creating one; the old sandbox's id when recreating (or ""). */
  sandboxId: string;
  /** Attempt number for the new sandbox (or the current sandbox's attempt). */
  attempt: number;
  /** Indices into `spec.initContainers` to start, in spec order. */
  initContainersToStart: number[];
  /** Indices into `spec.containers` to start, in spec order. */
  containersToStart: number[];
  /** Indices into `spec.ephemeralContainers` to start (those never started), in spec order. */
  ephemeralContainersToStart: number[];
  /** Container instances to stop before starting anything, keyed by container id. */
  containersToKill: Map<string, ContainerToKill>;
}

/** Options of {@linkcode computePodActions}. */
export interface ComputePodActionsOptions {
  /** Liveness results by container id (missing = not probed yet). */
  livenessResults?: ReadonlyMap<string, ProbeResult>;
  /** Startup results by container id (missing = not probed yet). */
  startupResults?: ReadonlyMap<string, ProbeResult>;
}
