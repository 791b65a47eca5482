/**
 * Builders for tests and benches of `src/pod`: a runtime view of one running
 * container and of one pod; a recording systemd cgroup driver; a sync handler
 * over real pod workers for admission tests. Import only from tests and benches.
 * @module
 */
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import type { CgroupSettings } from "./cgroups/cgroup_settings.ts";
import type { CgroupSlices } from "./cgroups/cgroup_slices.ts";
import { containerHashString } from "./containers/container_hash.ts";
import { PodWorkers } from "./lifecycle/pod_workers.ts";
import { type PodAdmission, PodSyncHandler } from "./lifecycle/sync_loop.ts";
import type {
  Container,
  ContainerView,
  Pod,
  PodRuntimeStatus,
  PodStatus,
  PodSyncer,
  SandboxView,
} from "./types.ts";

/** A running container of sandbox `sb1` whose hash matches `container`'s spec. */
export function makeContainerView(
  container: Container,
  over: Partial<ContainerView> = {},
): ContainerView {
  return {
    id: `id-${container.name}`,
    name: container.name,
    sandboxId: "sb1",
    state: "running",
    createdAt: 1,
    startedAt: 1,
    finishedAt: 0,
    exitCode: 0,
    reason: "",
    message: "",
    image: container.image ?? "",
    imageRef: "",
    hash: containerHashString(container),
    restartCount: 0,
    containerType: "container",
    ...over,
  };
}

/** The runtime view of pod `default/web` (uid `u1`) unless `over` says otherwise. */
export function makePodRuntimeStatus(
  sandboxes: SandboxView[],
  containers: ContainerView[],
  over: Partial<Omit<PodRuntimeStatus, "sandboxes" | "containers">> = {},
): PodRuntimeStatus {
  return {
    uid: "u1",
    name: "web",
    namespace: "default",
    sandboxes,
    containers,
    ...over,
  };
}

/**
 * A systemd driver that records its calls (`start <unit>`, `set <unit> <settings json>`,
 * `stop <unit>`) in order; `failStart` makes starting that unit reject.
 */
export class RecordingCgroupSlices implements CgroupSlices {
  readonly calls: string[] = [];
  failStart: string | undefined;

  start(path: string): Promise<void> {
    const unit = path.split("/").pop() ?? "";
    this.calls.push(`start ${unit}`);
    if (unit === this.failStart) {
      return Promise.reject(new Error(`systemd refused "${unit}"`));
    }
    return Promise.resolve();
  }
  set(path: string, settings: CgroupSettings): Promise<void> {
    this.calls.push(`set ${path.split("/").pop()} ${JSON.stringify(settings)}`);
    return Promise.resolve();
  }
  stop(path: string): Promise<void> {
    this.calls.push(`stop ${path.split("/").pop()}`);
    return Promise.resolve();
  }
}

/** What `admissionHarness` gives a test. */
export interface AdmissionHarness extends AsyncDisposable {
  /** UIDs of the pods the workers synced, in order. */
  synced: string[];
  /** The last status the admission set per pod UID. */
  statuses: Map<string, PodStatus>;
  handler: PodSyncHandler;
  workers: PodWorkers;
}

/**
 * A `PodSyncHandler` over real pod workers whose syncer records the UIDs it syncs, with the
 * admission `admission` builds around a status sink that records each pod's status by UID.
 * Dispose it (`await using`) to stop the workers.
 */
export function admissionHarness(
  admission: (
    statuses: { setPodStatus(pod: Pod, status: PodStatus): void },
  ) => PodAdmission,
  { clock, logger }: { clock: Clock; logger: Logger },
): AdmissionHarness {
  const synced: string[] = [];
  const statuses = new Map<string, PodStatus>();
  const syncer: PodSyncer = {
    syncPod: (w) => {
      synced.push(w.pod.metadata.uid!);
      return Promise.resolve({ terminal: false });
    },
    syncTerminatingPod: () => Promise.resolve(),
    syncTerminatedPod: () => Promise.resolve(),
  };
  const workers = new PodWorkers(
    { syncer, clock, logger },
    { random: () => 0 },
  );
  const handler = new PodSyncHandler({
    workers,
    clock,
    logger,
    allSourcesReady: () => true,
    admission: admission({
      setPodStatus: (p, s) => void statuses.set(p.metadata.uid!, s),
    }),
  });
  return {
    synced,
    statuses,
    handler,
    workers,
    [Symbol.asyncDispose]: () => workers[Symbol.asyncDispose](),
  };
}
