/**
 * Removing a pod's superseded init-container instances (kuberuntime's `purgeInitContainers` and
 * `pruneInitContainersBeforeStart`), together with their termination-message files.
 *
 * @module
 */

import type { Logger } from "../../log/mod.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import { isNotFound } from "../../runtime/mod.ts";
import {
  containerDirectory,
  type TerminationMessageWriter,
} from "../containers/termination_message.ts";
import type { ContainerView, Pod, PodRuntimeStatus } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** Dependencies of {@linkcode createInitContainerCleaner}. */
export interface InitContainerCleanerDeps {
  runtime: RuntimeService;
  logger: Logger;
  messageWriter: TerminationMessageWriter;
  /** Kubelet root dir holding termination-message files; omitted → none to delete. */
  rootDir?: string;
}

/** Removes init-container instances that are no longer needed. */
export interface InitContainerCleaner {
  /** Removes every instance of every init container (the pod gets a new sandbox). */
  purge(pod: Pod, status: PodRuntimeStatus, signal: AbortSignal): Promise<void>;
  /** Keeps only the newest exited instance of each init container. */
  prune(pod: Pod, status: PodRuntimeStatus, signal: AbortSignal): Promise<void>;
}

/** Creates the {@linkcode InitContainerCleaner} over a CRI runtime. */
export function createInitContainerCleaner(
  deps: InitContainerCleanerDeps,
): InitContainerCleaner {
  const removePath = async (path: string) => {
    try {
      await deps.messageWriter.remove(path);
    } catch (error) {
      deps.logger.warn("Failed to remove termination message files", {
        path,
        err: errorMessage(error),
      });
    }
  };
  // Deletes the termination-message file of a removed container (only under our root dir).
  const removeMessageFile = async (pod: Pod, view: ContainerView) => {
    const path = view.terminationMessageHostPath;
    const uid = pod.metadata.uid ?? "";
    if (!path || !deps.rootDir || !uid) return;
    const dir = containerDirectory(deps.rootDir, uid, view.name);
    if (path.startsWith(`${dir}/`)) await removePath(path);
  };
  const remove = async (pod: Pod, view: ContainerView, signal: AbortSignal) => {
    try {
      await deps.runtime.removeContainer({ containerId: view.id }, { signal });
    } catch (error) {
      signal.throwIfAborted();
      if (!isNotFound(error)) {
        deps.logger.warn("Failed to remove container", {
          containerID: view.id,
          err: errorMessage(error),
        });
        return;
      }
    }
    await removeMessageFile(pod, view);
  };
  const initNames = (pod: Pod) =>
    new Set((pod.spec.initContainers ?? []).map((c) => c.name));
  return {
    async purge(pod, status, signal) {
      const names = initNames(pod);
      for (const c of status.containers) {
        if (names.has(c.name)) await remove(pod, c, signal);
      }
    },
    async prune(pod, status, signal) {
      const names = initNames(pod);
      const seen = new Set<string>();
      for (const c of status.containers) {
        if (!names.has(c.name) || c.state !== "exited") continue;
        if (seen.has(c.name)) await remove(pod, c, signal);
        else seen.add(c.name);
      }
    },
  };
}
