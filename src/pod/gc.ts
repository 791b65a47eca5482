/**
 * Orphan garbage collection: runtime objects labelled with a pod UID the kubelet no longer
 * knows are stopped and removed (kubelet's runtime-pod cleanup in housekeeping). Objects without
 * the `io.kubernetes.pod.uid` label were not created by a kubelet and are left alone.
 *
 * @module
 */

import type { Logger } from "../log/mod.ts";
import { isNotFound, type RuntimeService } from "../runtime/mod.ts";
import { POD_UID_LABEL } from "./container_config.ts";
import { MINIMUM_GRACE_PERIOD_SECONDS } from "./pod_kill.ts";

/** Options of {@linkcode garbageCollectOrphans}. */
export interface GarbageCollectOptions {
  signal?: AbortSignal;
  /** Grace for stopping orphaned running containers (seconds, floored at 2; default 2). */
  gracePeriodSeconds?: number;
}

/** What one collection removed. */
export interface GcResult {
  containersRemoved: number;
  sandboxesRemoved: number;
  /** Objects that could not be removed (retried on the next run). */
  errors: string[];
}

/**
 * Stops and removes every container and sandbox whose pod UID label is not in
 * `activePodUids`. Never throws for a single object; failures are listed in `errors`.
 */
export async function garbageCollectOrphans(
  deps: { runtime: RuntimeService; logger: Logger },
  activePodUids: ReadonlySet<string>,
  options: GarbageCollectOptions = {},
): Promise<GcResult> {
  const call = options.signal ? { signal: options.signal } : {};
  const grace = Math.max(
    options.gracePeriodSeconds ?? 0,
    MINIMUM_GRACE_PERIOD_SECONDS,
  );
  const result: GcResult = {
    containersRemoved: 0,
    sandboxesRemoved: 0,
    errors: [],
  };
  const orphan = (labels: Record<string, string> | undefined) => {
    const uid = labels?.[POD_UID_LABEL];
    return uid !== undefined && !activePodUids.has(uid);
  };
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
      return true;
    } catch (error) {
      options.signal?.throwIfAborted();
      if (isNotFound(error)) return true;
      const text = `${what}: ${
        error instanceof Error ? error.message : String(error)
      }`;
      result.errors.push(text);
      deps.logger.warn("Failed to garbage collect orphaned runtime object", {
        err: text,
      });
      return false;
    }
  };

  const { containers } = await deps.runtime.listContainers({}, call);
  for (const c of containers.filter((c) => orphan(c.labels))) {
    deps.logger.info("Removing orphaned container", {
      containerID: c.id,
      podUID: c.labels[POD_UID_LABEL],
    });
    const stopped = await attempt(
      `stop container "${c.id}"`,
      () =>
        deps.runtime.stopContainer(
          { containerId: c.id, timeout: BigInt(grace) },
          { ...call, timeoutMs: grace * 1000 + 120_000 },
        ),
    );
    if (
      stopped &&
      await attempt(
        `remove container "${c.id}"`,
        () => deps.runtime.removeContainer({ containerId: c.id }, call),
      )
    ) {
      result.containersRemoved++;
    }
  }
  const { items } = await deps.runtime.listPodSandbox({}, call);
  for (const s of items.filter((s) => orphan(s.labels))) {
    deps.logger.info("Removing orphaned pod sandbox", {
      sandboxID: s.id,
      podUID: s.labels[POD_UID_LABEL],
    });
    const stopped = await attempt(
      `stop sandbox "${s.id}"`,
      () => deps.runtime.stopPodSandbox({ podSandboxId: s.id }, call),
    );
    if (
      stopped &&
      await attempt(
        `remove sandbox "${s.id}"`,
        () => deps.runtime.removePodSandbox({ podSandboxId: s.id }, call),
      )
    ) {
      result.sandboxesRemoved++;
    }
  }
  return result;
}
