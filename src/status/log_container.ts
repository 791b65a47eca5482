/**
 * Which container instance `kubectl logs` reads, from the container's status: the current one,
 * the last terminated one (`--previous`, or while the next is not yet running), or an error
 * text saying why there is no log yet. The cases and texts are upstream's
 * (`validateContainerLogStatus`), as clients and the node e2e suite match on them.
 *
 * @module
 */
import type { ContainerStatus } from "../api/mod.ts";

/** A container id (`<runtime>://<id>`), or why there is none to read. */
export type LogContainer = { id: string } | { error: string };

/** Picks the instance of `container` (in `pod`) whose log is asked for. */
export function logContainer(
  status: ContainerStatus | undefined,
  pod: string,
  container: string,
  previous: boolean,
): LogContainer {
  const what = `container "${container}" in pod "${pod}"`;
  if (!status) return { error: `${what} is not available` };
  const last = status.lastState.terminated;
  const { waiting, running, terminated } = status.state;
  const lastOrError = (): LogContainer =>
    last?.containerID
      ? { id: last.containerID }
      : { error: `${what} is terminated` };
  if (previous) {
    return last?.containerID
      ? { id: last.containerID }
      : { error: `previous terminated ${what} not found` };
  }
  if (running) {
    return status.containerID
      ? { id: status.containerID }
      : { error: `${what} is not available` };
  }
  if (terminated) {
    return terminated.containerID
      ? { id: terminated.containerID }
      : lastOrError();
  }
  if (last) return lastOrError();
  if (waiting) {
    const reason = waiting.reason ?? "";
    const why = WAITING[reason] ?? reason;
    return { error: `${what} is waiting to start: ${why}` };
  }
  return { error: `${what} is waiting to start - no logs yet` };
}

/** Plain words for the waiting reasons users meet most. */
const WAITING: Record<string, string> = {
  ErrImagePull: "image can't be pulled",
  ImagePullBackOff: "trying and failing to pull image",
};
