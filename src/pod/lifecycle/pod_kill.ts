/**
 * Stopping containers and pods (kuberuntime's `killContainer`/`killPodWithSyncResult`,
 * kuberuntime_container.go and kuberuntime_manager.go).
 * Sandboxes and exited containers are removed later (terminated-pod cleanup or GC), not here.
 *
 * @module
 */

import { containerReference, type PodEventRecorder } from "../pod_events.ts";
import type { Clock } from "../../clock/mod.ts";
import type { Logger } from "../../log/mod.ts";
import { isNotFound, type RuntimeService } from "../../runtime/mod.ts";
import { runLifecycleHook } from "../containers/lifecycle_hooks.ts";
import type { KillReason } from "./pod_plan.ts";
import {
  terminationPrerequisites,
  type TerminationTurns,
  terminationTurns,
} from "./termination_order.ts";
import type {
  Container,
  ContainerView,
  LifecycleHandler,
  Pod,
  PodRuntimeStatus,
  SyncResult,
} from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Kubelet never asks the runtime for less than this many seconds of grace. */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;
/** API default of `terminationGracePeriodSeconds`. */
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;

/** Dependencies of the kill helpers. */
export interface KillDeps {
  runtime: RuntimeService;
  logger: Logger;
  clock: Clock;
  /** Added to the grace period to form the CRI call deadline (ms). */
  runtimeRequestTimeoutMs: number;
  /** `Killing` events; omitted → none. */
  events?: PodEventRecorder;
}

/** Options of {@linkcode killContainer}. */
export interface KillContainerOptions {
  /** Pod-level override (the worker's effective grace period), in seconds. */
  gracePeriodOverride?: number;
  reason?: KillReason;
  message?: string;
  signal?: AbortSignal;
  /** The pod's stop order (sidecars): the stop waits for its turn after the preStop hook. */
  turns?: TerminationTurns;
}

/**
 * Grace period for stopping a container: pod-level override, else the pod's deletion grace,
 * else the probe's (for probe kills), else the spec's (default 30 s). The caller floors the
 * remainder at {@linkcode MINIMUM_GRACE_PERIOD_SECONDS} after any preStop hook.
 */
export function containerGracePeriod(
  pod: Pod | undefined,
  container: Container | undefined,
  options: {
    gracePeriodOverride?: number;
    reason?: KillReason;
    recorded?: number;
  },
): number {
  let grace = pod?.metadata.deletionGracePeriodSeconds ??
    pod?.spec.terminationGracePeriodSeconds ?? options.recorded ??
    DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  if (pod?.metadata.deletionGracePeriodSeconds === undefined && container) {
    const probe = options.reason === "LivenessProbe"
      ? container.livenessProbe
      : options.reason === "StartupProbe"
      ? container.startupProbe
      : undefined;
    if (probe?.terminationGracePeriodSeconds !== undefined) {
      grace = probe.terminationGracePeriodSeconds;
    }
  }
  if (options.gracePeriodOverride !== undefined) {
    grace = options.gracePeriodOverride;
  }
  return grace;
}

/** Stops one container with its grace period as the CRI timeout. NotFound counts as success. */
export async function killContainer(
  deps: KillDeps,
  target: { pod: Pod | undefined; view: ContainerView; container?: Container },
  options: KillContainerOptions = {},
): Promise<SyncResult> {
  const { pod, view } = target;
  const container = target.container ?? [
    ...(pod?.spec.initContainers ?? []),
    ...(pod?.spec.containers ?? []),
    ...(pod?.spec.ephemeralContainers ?? []),
  ].find((c) => c.name === view.name);
  const graceOptions: {
    gracePeriodOverride?: number;
    reason?: KillReason;
    recorded?: number;
  } = {};
  if (options.gracePeriodOverride !== undefined) {
    graceOptions.gracePeriodOverride = options.gracePeriodOverride;
  }
  if (options.reason !== undefined) graceOptions.reason = options.reason;
  if (view.terminationGracePeriodSeconds !== undefined) {
    graceOptions.recorded = view.terminationGracePeriodSeconds;
  }
  let grace = containerGracePeriod(pod, container, graceOptions);
  if (pod && container) {
    deps.events?.event(
      containerReference(pod, container.name),
      "Normal",
      "Killing",
      options.message || `Stopping container ${container.name}`,
    );
  }
  const preStop = container?.lifecycle?.preStop;
  if (pod && preStop && grace > 0 && view.state === "running") {
    grace -= await runPreStopHook(deps, {
      pod,
      view,
      handler: preStop,
    }, { grace, ...(options.signal ? { signal: options.signal } : {}) });
  }
  if (options.turns && grace > 0) {
    // whole seconds, truncated, as upstream's int64 conversion
    grace -= Math.floor(await options.turns.waitForTurn(view.name, grace));
  }
  grace = Math.max(grace, MINIMUM_GRACE_PERIOD_SECONDS);
  deps.logger.info("Killing container with a grace period", {
    containerName: view.name,
    containerID: view.id,
    gracePeriod: grace,
    ...(options.message ? { reason: options.message } : {}),
  });
  try {
    await deps.runtime.stopContainer(
      { containerId: view.id, timeout: BigInt(grace) },
      {
        timeoutMs: grace * 1000 + deps.runtimeRequestTimeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    options.turns?.stopped(view.name);
    return { action: "KillContainer", target: view.name };
  } catch (error) {
    if (isNotFound(error)) {
      options.turns?.stopped(view.name);
      return { action: "KillContainer", target: view.name };
    }
    options.signal?.throwIfAborted();
    return {
      action: "KillContainer",
      target: view.name,
      reason: "KillContainerError",
      message: `failed to stop container "${view.name}": ${
        errorMessage(error)
      }`,
    };
  }
}

/**
 * Upstream `executePreStopHook`: starts the hook and waits for it at most `grace` seconds; a
 * hook still running then is left to finish on its own (its ExecSync keeps its own deadline)
 * while the container is stopped with the rest of the grace period. Returns the whole seconds
 * spent waiting.
 */
async function runPreStopHook(
  deps: KillDeps,
  target: { pod: Pod; view: ContainerView; handler: LifecycleHandler },
  options: { grace: number; signal?: AbortSignal },
): Promise<number> {
  const { clock, logger } = deps;
  const started = clock.now();
  const hook = runLifecycleHook(deps, {
    pod: target.pod,
    containerName: target.view.name,
    containerId: target.view.id,
    handler: target.handler,
  }, {
    timeoutSeconds: options.grace,
    ...(options.signal ? { signal: options.signal } : {}),
  }).then((failure) => {
    if (failure) logger.warn("PreStop hook failed", { err: failure });
    return true;
  }, () => true);
  const timer = new AbortController();
  const waits = options.signal
    ? AbortSignal.any([timer.signal, options.signal])
    : timer.signal;
  const finished = await Promise.race([
    hook,
    clock.sleep(options.grace * 1000, waits).then(() => false, () => false),
  ]);
  timer.abort();
  options.signal?.throwIfAborted();
  if (!finished) {
    logger.v(2).info("PreStop hook not completed in grace period", {
      containerName: target.view.name,
      containerID: target.view.id,
      gracePeriod: options.grace,
    });
  }
  return Math.floor((clock.now() - started) / 1000);
}

/** Options of {@linkcode killPod}. */
export interface KillPodOptions {
  gracePeriodOverride?: number;
  signal?: AbortSignal;
}

/**
 * Stops every running (or unknown-state) container of the pod at once, then every sandbox.
 * With sidecars each stop waits for its turn (upstream `killContainersWithSyncResult` with
 * its termination ordering): regular containers, then sidecars in reverse order.
 */
export async function killPod(
  deps: KillDeps,
  target: { pod: Pod | undefined; status: PodRuntimeStatus },
  options: KillPodOptions = {},
): Promise<SyncResult[]> {
  const { pod, status } = target;
  const live = status.containers.filter((c) =>
    c.state === "running" || c.state === "unknown"
  );
  const killOptions: KillContainerOptions = {};
  if (options.gracePeriodOverride !== undefined) {
    killOptions.gracePeriodOverride = options.gracePeriodOverride;
  }
  if (options.signal) killOptions.signal = options.signal;
  if (pod) {
    const order = terminationPrerequisites(pod, live.map((c) => c.name));
    if (order.size > 0) {
      killOptions.turns = terminationTurns(order, {
        clock: deps.clock,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    }
  }
  const results = await Promise.all(
    live.map((view) => killContainer(deps, { pod, view }, killOptions)),
  );
  for (const sandbox of status.sandboxes) {
    try {
      await deps.runtime.stopPodSandbox(
        { podSandboxId: sandbox.id },
        options.signal ? { signal: options.signal } : {},
      );
      results.push({ action: "KillPodSandbox", target: sandbox.id });
    } catch (error) {
      if (isNotFound(error)) continue;
      options.signal?.throwIfAborted();
      results.push({
        action: "KillPodSandbox",
        target: sandbox.id,
        reason: "KillPodSandboxError",
        message: `failed to stop sandbox "${sandbox.id}": ${
          errorMessage(error)
        }`,
      });
    }
  }
  return results;
}
