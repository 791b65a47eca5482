/**
 * Builders for tests and benches of `src/pod`: a runtime view of one running
 * container and of one pod; a recording systemd cgroup driver. Import only from
 * tests and benches.
 * @module
 */
import type { CgroupSettings } from "./cgroups/cgroup_settings.ts";
import type { CgroupSlices } from "./cgroups/cgroup_slices.ts";
import { containerHashString } from "./containers/container_hash.ts";
import type {
  Container,
  ContainerView,
  PodRuntimeStatus,
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
