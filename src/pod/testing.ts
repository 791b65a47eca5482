/**
 * Builders for tests and benches of `src/pod`: a runtime view of one running
 * container and of one pod. Import only from tests and benches.
 * @module
 */
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
