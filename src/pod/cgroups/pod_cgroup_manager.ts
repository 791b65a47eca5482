/**
 * The kubelet's cgroup hierarchy under `cgroupRoot` with `cgroupsPerQOS` on the cgroupfs
 * driver: `kubepods` limited to node allocatable (upstream `enforceNodeAllocatableCgroups`,
 * with the `NodeAllocatableEnforced` event), the `burstable` and `besteffort` tiers kept in
 * step with the active pods (upstream `qosContainerManager`: before a pod cgroup is made,
 * after a pod is gone and every minute), pod cgroups created with their settings before the
 * sandbox and removed after the pod, and orphaned pod cgroups removed by housekeeping
 * (upstream `cleanupOrphanedPodCgroups`). Decisions come from `cgroup_settings.ts`; files are
 * written through `cgroup_tree.ts`.
 *
 * @module
 */

import type { Clock } from "../../clock/mod.ts";
import { nodeReference } from "../../events/mod.ts";
import type { Logger } from "../../log/mod.ts";
import {
  type CgroupCapacity,
  type CgroupSettings,
  kubepodsSettings,
  type NodeAllocatableConfig,
  orphanedPodCgroups,
  podCgroupSettings,
  qosTierSettings,
  reservedCgroupPlans,
} from "./cgroup_settings.ts";
import {
  applyCgroup,
  cgroupExists,
  cgroupProcs,
  type CgroupTree,
  type CgroupTreeFs,
  denoCgroupTreeFs,
  listPodCgroups,
  openCgroupTree,
  removeCgroup,
} from "./cgroup_tree.ts";
import type { PodEventRecorder } from "../pod_events.ts";
import { type CgroupSlices, systemdCgroupSlices } from "./cgroup_slices.ts";
import { connectSystemd, reconnectingSystemd } from "../../systemd/mod.ts";
import {
  type PodCgroupOptions,
  podCgroupParent,
  qosCgroupNames,
} from "./pod_cgroups.ts";
import type { Pod } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Upstream `periodicQOSCgroupUpdateInterval`. */
export const QOS_UPDATE_PERIOD_MS = 60_000;

/** What housekeeping and the pod syncer ask of the pod cgroups. */
export interface PodCgroupManager {
  /** Creates kubepods (limited to node allocatable) and the QoS tiers; once. */
  start(): Promise<void>;
  /** Before the sandbox: when missing, the pod cgroup with its settings (tiers first). */
  ensurePod(pod: Pod): Promise<void>;
  /**
   * In-place resize: writes `settings` (cpu quota/period, shares or memory limit of the
   * allocated `pod`) to its existing cgroup; the tiers then follow its new requests.
   */
  resizePod(pod: Pod, settings: CgroupSettings): Promise<void>;
  /**
   * After the pod's containers are gone: processes left in its cgroup are killed, the cgroup
   * goes and the tiers follow.
   */
  removePod(pod: Pod): Promise<void>;
  /**
   * Housekeeping: the tiers follow `activePods` (written when changed and every minute) and
   * pod cgroups of pods `known` does not accept are removed.
   */
  housekeeping(
    activePods: readonly Pod[],
    known: (uid: string) => boolean,
  ): Promise<void>;
}

/** Dependencies of {@linkcode createPodCgroupManager}. */
export interface PodCgroupManagerDeps {
  tree: CgroupTree;
  logger: Logger;
  clock: Pick<Clock, "now">;
  /** Node events (`NodeAllocatableEnforced`); omitted → none. */
  events?: PodEventRecorder;
  /**
   * Whether a pod still has volume directories: its orphaned cgroup then only drops to the
   * minimum CPU shares until they are gone (upstream `ReduceCPULimits`); omitted → never.
   */
  podVolumesExist?: (uid: string) => Promise<boolean>;
  /**
   * Sends SIGKILL to a process found in `cgroup` (default `Deno.kill`; the cgroup agent's
   * kill checks the membership); throws `NotFound` when it is gone.
   */
  kill?: (pid: number, cgroup: string) => void | Promise<void>;
  /**
   * The systemd driver: each cgroup is also a slice unit, started before its directory is
   * made, given the settings as unit properties and stopped before it is removed; omitted →
   * the cgroupfs driver (files only).
   */
  slices?: CgroupSlices;
}

/** Upstream `tryKillingCgroupProcesses` tries this many rounds. */
const KILL_ROUNDS = 5;

/** Options of {@linkcode createPodCgroupManager}. */
export interface PodCgroupManagerOptions {
  nodeName: string;
  cgroups: PodCgroupOptions;
  capacity: CgroupCapacity;
  allocatable: NodeAllocatableConfig;
  /** Hugepage sizes of the node (`2MB`). */
  hugepageSizes: readonly string[];
  /** `podPidsLimit` (-1: none). */
  podPidsLimit?: number;
}

/** Builds the manager; nothing is touched until `start` or `ensurePod`. */
export function createPodCgroupManager(
  deps: PodCgroupManagerDeps,
  options: PodCgroupManagerOptions,
): PodCgroupManager {
  const { tree, logger, clock } = deps;
  const { kubepods, ...tiers } = qosCgroupNames(options.cgroups);
  const active = new Map<string, Pod>();
  let started: Promise<void> | undefined;
  let enforced = false;
  let lastWritten = "";
  let lastWriteAt = Number.NEGATIVE_INFINITY;
  let lastEnforceTry = Number.NEGATIVE_INFINITY;
  const { slices } = deps;

  /**
   * Upstream `cgroupManager.Create` (and `Update` with `create: false`): with the systemd
   * driver the slice unit first (started when creating, its properties always), then the
   * files either way.
   */
  const apply = async (
    path: string,
    settings: CgroupSettings,
    options: { create?: boolean } = {},
  ) => {
    if (slices) {
      if (options.create ?? true) await slices.start(path);
      else if (!await cgroupExists(tree, path)) return;
      await slices.set(path, settings);
    }
    await applyCgroup(tree, path, settings, options);
  };

  const enforce = async () => {
    lastEnforceTry = clock.now();
    const settings = kubepodsSettings(options.capacity, options.allocatable);
    const node = nodeReference(options.nodeName);
    try {
      await apply(kubepods, settings);
      enforced = true;
      deps.events?.event(
        node,
        "Normal",
        "NodeAllocatableEnforced",
        "Updated Node Allocatable limit across pods",
      );
    } catch (error) {
      const err = errorMessage(error);
      // retried every minute, as upstream does until pods' usage fits
      deps.events?.event(
        node,
        "Warning",
        "FailedNodeAllocatableEnforcement",
        `Failed to update Node Allocatable Limits "${kubepods}": ${err}`,
      );
      logger.warn("Failed to enforce node allocatable on kubepods", {
        cgroup: kubepods,
        err,
      });
    }
  };

  /**
   * Upstream's reserved-cgroup step after kubepods: each enforced reservation onto its
   * existing cgroup, with an event; it stops at the first failure (upstream then fails the
   * kubelet's start, kubelet.ts logs it and goes on).
   */
  const enforceReserved = async () => {
    const node = nodeReference(options.nodeName);
    const plans = reservedCgroupPlans(
      options.allocatable,
      options.hugepageSizes,
    );
    for (const plan of plans) {
      let err = "error" in plan ? plan.error : "";
      if (!("error" in plan)) {
        try {
          if (!await cgroupExists(tree, plan.cgroup)) {
            throw new Error(`cgroup "${plan.cgroup}" does not exist`);
          }
          await apply(plan.cgroup, plan.settings, {
            create: false,
          });
          deps.events?.event(
            node,
            "Normal",
            "NodeAllocatableEnforced",
            `Updated limits on ${plan.short} cgroup ${plan.cgroup}`,
          );
          continue;
        } catch (error) {
          err = errorMessage(error);
        }
      }
      const cgroup = "cgroup" in plan ? plan.cgroup : "";
      const message =
        `Failed to enforce ${plan.label} Cgroup Limits on "${cgroup}": ${err}`;
      deps.events?.event(
        node,
        "Warning",
        "FailedNodeAllocatableEnforcement",
        message,
      );
      logger.error(message);
      return;
    }
  };

  const kill = deps.kill ?? ((pid: number) => Deno.kill(pid, "SIGKILL"));
  /**
   * Upstream `podContainerManager.Destroy`: SIGKILL to every process left in the cgroup (a
   * few rounds while some refuse), then the directories.
   */
  const destroy = async (path: string) => {
    const pids = await cgroupProcs(tree, path);
    const done = new Set<number>();
    let failure: unknown;
    for (
      let round = 0;
      round < KILL_ROUNDS && done.size < pids.length;
      round++
    ) {
      failure = undefined;
      for (const pid of pids) {
        if (done.has(pid)) continue;
        try {
          await kill(pid, path);
          done.add(pid);
        } catch (error) {
          if (error instanceof Deno.errors.NotFound) done.add(pid);
          else failure ??= error;
        }
      }
    }
    if (failure !== undefined) throw failure;
    await slices?.stop(path);
    await removeCgroup(tree, path);
  };

  const updateTiers = async () => {
    // upstream rewrites them every minute even when nothing changed
    const wanted = qosTierSettings([...active.values()], options.hugepageSizes);
    const key = JSON.stringify(wanted);
    const now = clock.now();
    if (key === lastWritten && now - lastWriteAt < QOS_UPDATE_PERIOD_MS) {
      return;
    }
    const entries: [string, CgroupSettings][] = [
      [kubepods, wanted.kubepods],
      [tiers.burstable, wanted.burstable],
      [tiers.besteffort, wanted.besteffort],
    ];
    for (const [path, settings] of entries) {
      await apply(path, settings, { create: false });
    }
    lastWritten = key;
    lastWriteAt = now;
  };

  const start = () =>
    started ??= (async () => {
      await enforce();
      await enforceReserved();
      const initial = qosTierSettings([], options.hugepageSizes);
      for (const tier of ["burstable", "besteffort"] as const) {
        await apply(tiers[tier], initial[tier]);
      }
    })().catch((error) => {
      started = undefined;
      throw error;
    });

  return {
    start,
    async ensurePod(pod) {
      const uid = pod.metadata.uid ?? "";
      active.set(uid, pod);
      const path = podCgroupParent(pod, options.cgroups);
      if (await cgroupExists(tree, path)) return;
      await start();
      await updateTiers();
      await apply(
        path,
        podCgroupSettings(pod, {
          hugepageSizes: options.hugepageSizes,
          ...(options.podPidsLimit !== undefined
            ? { podPidsLimit: options.podPidsLimit }
            : {}),
        }),
      );
    },
    async resizePod(pod, settings) {
      active.set(pod.metadata.uid ?? "", pod);
      const path = podCgroupParent(pod, options.cgroups);
      await apply(path, settings, { create: false });
      await updateTiers();
    },
    async removePod(pod) {
      active.delete(pod.metadata.uid ?? "");
      try {
        await destroy(podCgroupParent(pod, options.cgroups));
      } finally {
        if (started) await updateTiers();
      }
    },
    async housekeeping(activePods, known) {
      try {
        await start();
      } catch (error) {
        logger.warn("Failed to create the QoS cgroups", {
          err: errorMessage(error),
        });
        return;
      }
      active.clear();
      for (const pod of activePods) active.set(pod.metadata.uid ?? "", pod);
      if (!enforced && clock.now() - lastEnforceTry >= QOS_UPDATE_PERIOD_MS) {
        await enforce();
      }
      try {
        await updateTiers();
      } catch (error) {
        logger.info("Failed to reserve QoS requests", {
          err: errorMessage(error),
        });
      }
      const found = await listPodCgroups(tree, [
        kubepods,
        tiers.burstable,
        tiers.besteffort,
      ]);
      for (const [uid, path] of orphanedPodCgroups(found, known)) {
        try {
          if (await deps.podVolumesExist?.(uid)) {
            // memory-backed volumes keep their charge here until unmounted
            await apply(path, { cpuShares: 2 }, { create: false });
            continue;
          }
          await destroy(path);
          logger.v(3).info("Removed orphaned pod cgroup", { cgroup: path });
        } catch (error) {
          logger.v(3).info("Orphaned pod cgroup not removed yet", {
            cgroup: path,
            err: errorMessage(error),
          });
        }
      }
    },
  };
}

/** `2MB` → 2048 (kB), the /sys/kernel/mm/hugepages directory's unit. */
function hugepageKilobytes(size: string): number {
  const m = /^(\d+)(KB|MB|GB|TB)$/.exec(size);
  if (!m) return 0;
  return Number(m[1]) * 1024 ** ["KB", "MB", "GB", "TB"].indexOf(m[2]!);
}

async function readNumber(
  fs: CgroupTreeFs,
  path: string,
): Promise<number | undefined> {
  try {
    const n = Number((await fs.readTextFile(path)).trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The host's capacity for top-level cgroups (read through `fs`: /proc and /sys need every
 * permission or the cgroup agent): CPUs, memory, the task limit (`min(kernel.pid_max,
 * kernel.threads-max)`, as upstream `pidlimit.Stats`) and the preallocated hugepages per size.
 */
export async function readCgroupCapacity(
  memoryBytes: number,
  hugepageSizes: readonly string[],
  fs: CgroupTreeFs = denoCgroupTreeFs,
): Promise<CgroupCapacity> {
  const limits: number[] = [];
  for (const f of ["pid_max", "threads-max"]) {
    const n = await readNumber(fs, `/proc/sys/kernel/${f}`);
    if (n !== undefined) limits.push(n);
  }
  const hugepages: Record<string, number> = {};
  for (const size of hugepageSizes) {
    const kb = hugepageKilobytes(size);
    const pages = await readNumber(
      fs,
      `/sys/kernel/mm/hugepages/hugepages-${kb}kB/nr_hugepages`,
    );
    hugepages[size] = (pages ?? 0) * kb * 1024;
  }
  return {
    cpuMillis: navigator.hardwareConcurrency * 1000,
    memoryBytes,
    ...(limits.length ? { pids: Math.min(...limits) } : {}),
    hugepages,
  };
}

/** Upstream's `CgroupV1MaintenanceModeWarning`. */
export const CGROUP_V1_WARNING =
  "cgroup v1 support is in maintenance mode, please migrate to cgroup v2";

/**
 * The manager on the host's /sys/fs/cgroup, or undefined where the kubelet leaves cgroups to
 * the runtime: without `cgroupsPerQOS`, without host access (every Deno permission, or the
 * cgroup agent as `fs` and `kill`), or with the systemd driver when systemd cannot be reached
 * on the system bus (a warning; the runtime's slices then lack the kubelet's limits). With
 * the systemd driver each cgroup is also a slice unit (`deps.slices`: the cgroup agent's, or by default a connection
 * to the system bus). Having looked at
 * the host, it also does upstream's start-up `cgroupVersionCheck`: on cgroup v1 a `CgroupV1`
 * warning event on the Node.
 */
export async function openPodCgroupManager(
  deps: Omit<PodCgroupManagerDeps, "tree"> & { fs?: CgroupTreeFs },
  options: Omit<PodCgroupManagerOptions, "capacity"> & {
    memoryBytes: number;
    hostAccess: boolean;
    mount?: string;
    /** The kubelet's root dir: orphans with `pods/<uid>/volumes/<plugin>/<name>` wait. */
    rootDir?: string;
  },
): Promise<PodCgroupManager | undefined> {
  const { cgroups } = options;
  if (!options.hostAccess) return undefined;
  const tree = await openCgroupTree(
    deps.fs ?? denoCgroupTreeFs,
    options.mount ?? "/sys/fs/cgroup",
    options.hugepageSizes,
  );
  if (tree.version === "v1") {
    deps.events?.event(
      nodeReference(options.nodeName),
      "Warning",
      "CgroupV1",
      CGROUP_V1_WARNING,
    );
    deps.logger.v(2).info("Warning: cgroup check", { err: CGROUP_V1_WARNING });
  }
  const driver = cgroups.cgroupDriver ?? "cgroupfs";
  if (
    cgroups.cgroupsPerQOS === false ||
    (driver !== "cgroupfs" && driver !== "systemd")
  ) return undefined;
  let slices = deps.slices;
  if (driver === "systemd" && !slices) {
    try {
      slices = systemdCgroupSlices(
        reconnectingSystemd(() => connectSystemd(), await connectSystemd()),
      );
    } catch (error) {
      // the runtime still makes the slices (runc asks systemd), only without pod limits
      deps.logger.warn(
        "Cannot reach systemd on the system bus: pod slices get no kubelet-set limits",
        { err: error instanceof Error ? error.message : String(error) },
      );
      return undefined;
    }
  }
  const capacity = await readCgroupCapacity(
    options.memoryBytes,
    options.hugepageSizes,
    deps.fs,
  ).catch(() => ({
    cpuMillis: navigator.hardwareConcurrency * 1000,
    memoryBytes: options.memoryBytes,
  }));
  const rootDir = options.rootDir;
  const podVolumesExist = deps.podVolumesExist ??
    (rootDir ? (uid: string) => volumeDirsExist(rootDir, uid) : undefined);
  return createPodCgroupManager(
    {
      ...deps,
      tree,
      ...(podVolumesExist ? { podVolumesExist } : {}),
      ...(slices ? { slices } : {}),
    },
    { ...options, capacity },
  );
}

/** True when `<rootDir>/pods/<uid>/volumes` holds a volume directory of some plugin. */
async function volumeDirsExist(rootDir: string, uid: string): Promise<boolean> {
  const base = `${rootDir}/pods/${uid}/volumes`;
  for (const plugin of await denoCgroupTreeFs.readDirNames(base)) {
    if ((await denoCgroupTreeFs.readDirNames(`${base}/${plugin}`)).length) {
      return true;
    }
  }
  return false;
}
