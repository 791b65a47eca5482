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

/** Options of {@linkcode pruneDeadContainers}. */
export interface PruneDeadOptions {
  signal?: AbortSignal;
  /** Exited instances kept per pod and container name (kubelet's MaxPerPodContainer, 1). */
  maxPerPodContainer?: number;
}

/**
 * Container GC for pods that still exist (kubelet's `ContainerGCPeriod` pass): removes exited
 * container instances beyond the newest `maxPerPodContainer` per pod UID and container name,
 * and not-ready sandboxes that are older than the pod's newest sandbox and hold no containers.
 */
export async function pruneDeadContainers(
  deps: { runtime: RuntimeService; logger: Logger },
  options: PruneDeadOptions = {},
): Promise<GcResult> {
  const call = options.signal ? { signal: options.signal } : {};
  const keep = Math.max(0, options.maxPerPodContainer ?? 1);
  const result: GcResult = {
    containersRemoved: 0,
    sandboxesRemoved: 0,
    errors: [],
  };
  const { containers } = await deps.runtime.listContainers({}, call);
  const units = new Map<string, typeof containers>();
  for (const c of containers) {
    const uid = c.labels[POD_UID_LABEL];
    if (uid === undefined || c.state !== 2 /* CONTAINER_EXITED */) continue;
    const key = `${uid}/${c.metadata?.name ?? ""}`;
    units.set(key, [...(units.get(key) ?? []), c]);
  }
  for (const dead of units.values()) {
    dead.sort((a, b) =>
      Number(b.createdAt - a.createdAt) ||
      (b.metadata?.attempt ?? 0) - (a.metadata?.attempt ?? 0)
    );
    for (const c of dead.slice(keep)) {
      try {
        await deps.runtime.removeContainer({ containerId: c.id }, call);
        result.containersRemoved++;
      } catch (error) {
        options.signal?.throwIfAborted();
        if (isNotFound(error)) continue;
        result.errors.push(
          `remove container "${c.id}": ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      }
    }
  }
  const { containers: after } = await deps.runtime.listContainers({}, call);
  const remaining = new Set(after.map((c) => c.podSandboxId));
  const { items } = await deps.runtime.listPodSandbox({}, call);
  const newest = new Map<string, bigint>();
  for (const s of items) {
    const uid = s.labels[POD_UID_LABEL];
    const seen = uid === undefined ? undefined : newest.get(uid);
    if (uid !== undefined && (seen === undefined || s.createdAt > seen)) {
      newest.set(uid, s.createdAt);
    }
  }
  for (const s of items) {
    const uid = s.labels[POD_UID_LABEL];
    if (
      uid === undefined || s.state === 0 /* SANDBOX_READY */ ||
      remaining.has(s.id)
    ) continue;
    if (s.createdAt >= (newest.get(uid) ?? 0n)) continue;
    try {
      await deps.runtime.removePodSandbox({ podSandboxId: s.id }, call);
      result.sandboxesRemoved++;
    } catch (error) {
      options.signal?.throwIfAborted();
      if (isNotFound(error)) continue;
      result.errors.push(
        `remove sandbox "${s.id}": ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
  }
  if (result.containersRemoved + result.sandboxesRemoved > 0) {
    deps.logger.v(2).info("Removed dead containers and sandboxes", {
      containers: result.containersRemoved,
      sandboxes: result.sandboxesRemoved,
    });
  }
  return result;
}
