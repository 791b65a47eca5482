/**
 * Reads the runtime's view of one pod (kubelet's `GetPodStatus`): its sandboxes and container
 * instances found by the `io.kubernetes.pod.uid` label, each followed by a status call, sorted
 * newest first and converted to the runtime-neutral {@linkcode PodRuntimeStatus}.
 *
 * @module
 */

import {
  type ContainerStatus as CriContainerStatus,
  isNotFound,
  type PodSandboxStatus,
  type RuntimeService,
} from "../../runtime/mod.ts";
import { DEFAULT_TERMINATION_MESSAGE_PATH } from "../containers/container_config.ts";
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TYPE_ANNOTATION,
  POD_TERMINATION_GRACE_ANNOTATION,
  POD_UID_LABEL,
  TERMINATION_MESSAGE_PATH_ANNOTATION,
  TERMINATION_MESSAGE_POLICY_ANNOTATION,
} from "../runtime_labels.ts";
import {
  denoTerminationMessageReader,
  readTerminationMessage,
  type TerminationMessageReader,
  withTerminationMessage,
} from "../containers/termination_message.ts";
import type {
  ContainerView,
  PodRuntimeStatus,
  RuntimeContainerState,
  SandboxView,
} from "../types.ts";

/** Identity of the pod to read. */
export interface PodIdentity {
  uid: string;
  name: string;
  namespace: string;
}

/** Options of {@linkcode getPodRuntimeStatus}. */
export interface GetPodRuntimeStatusOptions {
  signal?: AbortSignal;
  /**
   * Reads termination-message files and log tails of exited containers (default: the host file
   * system).
   */
  messageReader?: TerminationMessageReader;
}

/** CRI nanosecond timestamp → ms epoch (0 stays 0). */
export function nsToMs(ns: bigint | number): number {
  return Number(BigInt(ns) / 1_000_000n);
}

const CONTAINER_STATES: RuntimeContainerState[] = [
  "created",
  "running",
  "exited",
  "unknown",
];
const NETWORK_MODES = ["pod", "container", "node", "target"] as const;

/** Converts a CRI `PodSandboxStatus` to a {@linkcode SandboxView}. */
export function toSandboxView(status: PodSandboxStatus): SandboxView {
  const view: SandboxView = {
    id: status.id,
    attempt: status.metadata?.attempt ?? 0,
    ready: status.state === 0,
    createdAt: nsToMs(status.createdAt),
    ip: status.network?.ip ?? "",
    additionalIps: (status.network?.additionalIps ?? []).map((p) => p.ip),
  };
  const mode = status.linux?.namespaces?.options?.network;
  if (mode !== undefined) view.networkMode = NETWORK_MODES[mode] ?? "pod";
  return view;
}

/** Converts a CRI `ContainerStatus` (plus its sandbox id) to a {@linkcode ContainerView}. */
export function toContainerView(
  status: CriContainerStatus,
  sandboxId: string,
): ContainerView {
  const annotations = status.annotations ?? {};
  const restart = Number.parseInt(
    annotations[CONTAINER_RESTART_COUNT_ANNOTATION] ?? "",
    10,
  );
  const view: ContainerView = {
    id: status.id,
    name: status.metadata?.name ??
      status.labels?.["io.kubernetes.container.name"] ?? "",
    sandboxId,
    state: CONTAINER_STATES[status.state] ?? "unknown",
    createdAt: nsToMs(status.createdAt),
    startedAt: nsToMs(status.startedAt),
    finishedAt: nsToMs(status.finishedAt),
    exitCode: status.exitCode,
    reason: status.reason,
    message: status.message,
    image: status.image?.image ?? "",
    imageRef: status.imageRef,
    hash: annotations[CONTAINER_HASH_ANNOTATION] ?? "",
    restartCount: Number.isFinite(restart) ? restart : 0,
    containerType: annotations[CONTAINER_TYPE_ANNOTATION] ?? "",
  };
  const grace = Number.parseInt(
    annotations[POD_TERMINATION_GRACE_ANNOTATION] ?? "",
    10,
  );
  if (Number.isFinite(grace)) view.terminationGracePeriodSeconds = grace;
  const linux = status.resources?.linux;
  if (linux) {
    view.resources = {
      cpuPeriod: Number(linux.cpuPeriod),
      cpuQuota: Number(linux.cpuQuota),
      cpuShares: Number(linux.cpuShares),
      memoryLimitBytes: Number(linux.memoryLimitInBytes),
    };
  }
  const messagePath = annotations[TERMINATION_MESSAGE_PATH_ANNOTATION] ||
    DEFAULT_TERMINATION_MESSAGE_PATH;
  const mount = (status.mounts ?? []).find((m) =>
    m.containerPath === messagePath
  );
  if (mount?.hostPath) view.terminationMessageHostPath = mount.hostPath;
  const policy = annotations[TERMINATION_MESSAGE_POLICY_ANNOTATION];
  if (policy) view.terminationMessagePolicy = policy;
  if (status.logPath) view.logPath = status.logPath;
  return view;
}

/**
 * Reads every sandbox and container of the pod from the runtime. Objects that disappear between
 * the list and the status call are skipped; any other runtime error rejects.
 */
export async function getPodRuntimeStatus(
  runtime: RuntimeService,
  pod: PodIdentity,
  options: GetPodRuntimeStatusOptions = {},
): Promise<PodRuntimeStatus> {
  const call = options.signal ? { signal: options.signal } : {};
  const selector = { [POD_UID_LABEL]: pod.uid };
  const [sandboxList, containerList] = await Promise.all([
    runtime.listPodSandbox({ filter: { labelSelector: selector } }, call),
    runtime.listContainers({ filter: { labelSelector: selector } }, call),
  ]);
  const sandboxes: SandboxView[] = [];
  for (const item of sandboxList.items) {
    try {
      const res = await runtime.podSandboxStatus(
        { podSandboxId: item.id },
        call,
      );
      if (res.status) sandboxes.push(toSandboxView(res.status));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  const containers: ContainerView[] = [];
  for (const item of containerList.containers) {
    try {
      const res = await runtime.containerStatus({ containerId: item.id }, call);
      if (res.status) {
        const view = toContainerView(res.status, item.podSandboxId);
        if (view.state === "exited") {
          const message = await readTerminationMessage(
            options.messageReader ?? denoTerminationMessageReader,
            view,
          );
          view.message = withTerminationMessage(view.message, message);
        }
        containers.push(view);
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  // newest first; equal timestamps (coarse clocks) fall back to the attempt number
  sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  containers.sort((a, b) =>
    b.createdAt - a.createdAt || b.restartCount - a.restartCount
  );
  return { ...pod, sandboxes, containers };
}
