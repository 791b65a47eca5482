/**
 * Starting one container instance (kuberuntime's `startContainer`, kuberuntime_container.go):
 * crash-loop back-off check, image, restart count, CRI config, CreateContainer, StartContainer.
 * Every failure is a {@linkcode SyncResult} with the upstream reason; only an abort rejects.
 *
 * @module
 */

import { startedContainers } from "../../metrics/mod.ts";
import type { CounterChild } from "../../metrics/mod.ts";
import type { Logger } from "../../log/mod.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import { formatGoDuration } from "../../util/go_duration.ts";
import { type Backoff, containerBackoffKey } from "../containers/backoff.ts";
import {
  ContainerConfigError,
  type ContainerDeviceOptions,
  type ContainerType,
  generateContainerConfig,
  podLogDirectory,
  type PodSandboxConfigInit,
} from "../containers/container_config.ts";
import type { ImagePuller } from "../images/image_puller.ts";
import { fetchEnvObjects } from "../env/env_objects.ts";
import { isStaticPod } from "../static/mirror_pods.ts";
import {
  serviceEnvVars,
  type ServiceLister,
  SERVICES_NOT_SYNCED,
} from "../env/service_env.ts";
import type { ObjectGetter } from "../../objects/mod.ts";
import type { ContainerLogLinks } from "../logs/container_log_links.ts";
import { runLifecycleHook } from "../containers/lifecycle_hooks.ts";
import {
  containerReference,
  formatPod,
  type PodEventRecorder,
} from "../pod_events.ts";
import type { EventType } from "../../api/mod.ts";
import { containerVolumeMounts } from "../containers/container_volume_mounts.ts";
import type { VolumeManager } from "../../volume/mod.ts";
import type { PodEnvironment } from "../containers/pod_environment.ts";
import {
  createTerminationMessageFile,
  type TerminationMessageWriter,
} from "../containers/termination_message.ts";
import { killContainer, type KillDeps } from "./pod_kill.ts";
import { runtimeStatusMessage } from "../containers/runtime_messages.ts";
import type {
  Container,
  ContainerView,
  Pod,
  PodRuntimeStatus,
  SyncResult,
} from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

/** What {@linkcode startContainer} needs from the syncer. */
export interface StartContainerDeps {
  /** Used to run postStart hooks and to kill a container whose postStart hook failed. */
  kill: KillDeps;
  /** `/var/log/containers` links, made after each start; omitted → none. */
  logLinks?: Pick<ContainerLogLinks, "link">;
  runtime: RuntimeService;
  logger: Logger;
  backoff: Backoff;
  puller: ImagePuller;
  mkdir: (path: string) => Promise<void>;
  /** Lists file names in a directory (for the restart count after a node reboot). */
  readDirNames: (path: string) => Promise<string[]>;
  podLogsDir: string;
  /**
   * Kubelet root dir (`--root-dir`): each instance gets a termination-message file under
   * `<rootDir>/pods/<uid>/containers/<name>/`; omitted → no termination-message mount.
   */
  rootDir?: string;
  /** Creates the termination-message files. */
  messageWriter: TerminationMessageWriter;
  nodeName: string;
  hostIPs: string[];
  /** Node facts, image user and hosts file for the config; absent → none of them. */
  environment?: PodEnvironment;
  /** Pod volumes; absent → containers get no volume mounts. */
  volumes?: VolumeManager;
  /** The pod's ConfigMaps and Secrets for env; absent → standalone. */
  objects?: ObjectGetter;
  /** The cluster's Services for service env vars; absent → standalone (none). */
  services?: ServiceLister;
  /** Container lifecycle events (Created, Started, Failed, BackOff); omitted → none. */
  events?: PodEventRecorder;
  /** The device manager; omitted → containers get no devices. */
  devices?: ContainerDevices;
}

/** The device manager as container creation sees it. */
export interface ContainerDevices {
  /** The plugins' answers for `container`; undefined when it holds no devices. */
  containerOptions(
    pod: Pod,
    container: Container,
    signal?: AbortSignal,
  ): Promise<ContainerDeviceOptions | undefined>;
}

/** The sandbox the container joins, and the runtime view the decision was made on. */
export interface StartContext {
  pod: Pod;
  status: PodRuntimeStatus;
  sandboxId: string;
  sandboxConfig: PodSandboxConfigInit;
  podIPs: string[];
  signal: AbortSignal;
  /** Containers started earlier in this sync (running, though `status` predates them). */
  started?: Set<string>;
}

const EMPTY_VIEW: ContainerView = {
  id: "",
  name: "",
  sandboxId: "",
  state: "unknown",
  createdAt: 0,
  startedAt: 0,
  finishedAt: 0,
  exitCode: 0,
  reason: "",
  message: "",
  image: "",
  imageRef: "",
  hash: "",
  restartCount: 0,
  containerType: "",
};

/**
 * The pod's service variables; an API pod's container waits (fails to start, retried) until
 * the Services were listed once, so it does not start without `KUBERNETES_SERVICE_HOST`.
 */
function podServiceEnv(
  services: ServiceLister,
  pod: Pod,
): Map<string, string> {
  if (!isStaticPod(pod) && !services.hasSynced()) {
    throw new Error(SERVICES_NOT_SYNCED);
  }
  return serviceEnvVars(
    services.list(),
    pod.metadata.namespace ?? "default",
    pod.spec.enableServiceLinks ?? true,
  );
}

/** Reads the names in a directory with Deno (missing or unreadable → empty). */
export async function denoReadDirNames(path: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(path)) names.push(entry.name);
  } catch {
    return [];
  }
  return names;
}

/** Restart count when the runtime has no instance: highest `<N>.log` in the log dir + 1. */
async function restartCountFromLogs(
  deps: StartContainerDeps,
  pod: Pod,
  container: Container,
): Promise<number> {
  const dir = `${podLogDirectory(deps.podLogsDir, pod)}/${container.name}`;
  return restartCountFromLogNames(await deps.readDirNames(dir));
}

const RESTART_COUNT_LOG_REGEXP = /^(\d+)\.log(\..*)?$/;

/**
 * Upstream `calcRestartCountByLogDir`: one more than the highest `N` of the `N.log` files,
 * rotated ones (`N.log.<suffix>`) included; 0 when there is none.
 */
export function restartCountFromLogNames(names: readonly string[]): number {
  let highest = -1;
  for (const name of names) {
    const m = RESTART_COUNT_LOG_REGEXP.exec(name);
    if (m) highest = Math.max(highest, Number(m[1]));
  }
  return highest + 1;
}

function crashLoopMessage(
  pod: Pod,
  container: Container,
  windowMs: number,
): string {
  const m = pod.metadata;
  return `back-off ${
    formatGoDuration(windowMs)
  } restarting failed container=${container.name} pod=${m.name}_${m.namespace}(${m.uid})`;
}

/** `kubelet_started_containers_total` by upstream's container_type label, bound once. */
const STARTED_CONTAINERS: Readonly<Record<ContainerType, CounterChild>> = {
  container: startedContainers.labels("container"),
  init: startedContainers.labels("init_container"),
  ephemeral: startedContainers.labels("ephemeral_container"),
};

/** Starts one instance of `container` in the sandbox of `ctx`. */
export async function startContainer(
  deps: StartContainerDeps,
  ctx: StartContext,
  options: {
    container: Container;
    type: ContainerType;
    /** An ephemeral container's `targetContainerName`. */
    target?: string;
  },
): Promise<SyncResult> {
  const { pod, status, signal } = ctx;
  const { container } = options;
  const record = (type: EventType, reason: string, message: string) =>
    deps.events?.event(
      containerReference(pod, container.name),
      type,
      reason,
      message,
    );
  const fail = (
    reason: string,
    message: string,
    retryAt?: number,
  ): SyncResult => ({
    action: "StartContainer",
    target: container.name,
    reason,
    message,
    ...(retryAt !== undefined ? { retryAt } : {}),
  });
  // upstream records "Error: <message>" for every failure after the back-off check
  const failWithEvent = (reason: string, message: string, retryAt?: number) => {
    record("Warning", "Failed", `Error: ${message}`);
    return fail(reason, message, retryAt);
  };
  const newest = status.containers.find((c) => c.name === container.name);
  if (newest?.state === "exited") {
    const key = containerBackoffKey(pod, container);
    if (deps.backoff.isInBackoffSince(key, newest.finishedAt)) {
      const window = deps.backoff.get(key);
      record(
        "Warning",
        "BackOff",
        `Back-off restarting failed container ${container.name} in pod ${
          formatPod(pod)
        }`,
      );
      return fail(
        "CrashLoopBackOff",
        crashLoopMessage(pod, container, window),
        newest.finishedAt + window,
      );
    }
    deps.backoff.next(key, newest.finishedAt);
  }

  const image = await deps.puller.ensureImage(pod, container, {
    sandboxConfig: ctx.sandboxConfig,
    signal,
  });
  if (!image.ok) {
    // the image manager's error message is its reason (ErrImagePull, ImagePullBackOff...)
    record("Warning", "Failed", `Error: ${image.reason}`);
    return fail(image.reason, image.message, image.retryAt);
  }

  const restartCount = newest
    ? newest.restartCount + 1
    : await restartCountFromLogs(deps, pod, container);
  let targetContainerId: string | undefined;
  if (options.target) {
    targetContainerId = status.containers.find((c) => c.name === options.target)
      ?.id;
    if (!targetContainerId) {
      return failWithEvent(
        "CreateContainerConfigError",
        `unable to find target container ${options.target}`,
      );
    }
  }
  let config;
  try {
    await deps.mkdir(
      `${podLogDirectory(deps.podLogsDir, pod)}/${container.name}`,
    );
    const messageFile = deps.rootDir
      ? await createTerminationMessageFile(deps.messageWriter, {
        rootDir: deps.rootDir,
        podUid: pod.metadata.uid ?? "",
        containerName: container.name,
      })
      : undefined;
    const extra = await deps.environment?.containerOptions(pod, {
      imageRef: image.imageRef,
      podIPs: ctx.podIPs,
      signal,
    });
    const objects = deps.objects &&
      await fetchEnvObjects(deps.objects, pod, container, signal);
    const services = deps.services && podServiceEnv(deps.services, pod);
    const volumeMounts = deps.volumes &&
      await containerVolumeMounts(deps.volumes, {
        ...ctx,
        nodeName: deps.nodeName,
        container,
        env: {
          ...(objects ? { objects } : {}),
          ...(services ? { services } : {}),
          ...(extra?.allocatable ? { allocatable: extra.allocatable } : {}),
          ...(deps.hostIPs[0]
            ? { hostIP: deps.hostIPs[0], hostIPs: deps.hostIPs }
            : {}),
        },
      });
    const devices = await deps.devices?.containerOptions(
      pod,
      container,
      signal,
    );
    const volumeDevices = deps.volumes?.containerDevices?.(pod, container);
    config = generateContainerConfig(pod, container, {
      ...extra,
      ...(devices ? { devices } : {}),
      ...(volumeDevices?.length ? { volumeDevices } : {}),
      ...(volumeMounts ? { volumeMounts } : {}),
      ...(objects ? { objects } : {}),
      ...(services ? { services } : {}),
      restartCount,
      // the containers live in the sandbox's user namespace
      userNamespace: ctx.sandboxConfig.linux?.securityContext?.namespaceOptions
        ?.usernsOptions ?? null,
      imageRef: image.imageRef,
      ...(messageFile ? { terminationMessageHostPath: messageFile } : {}),
      ...(targetContainerId ? { targetContainerId } : {}),
      nodeName: deps.nodeName,
      podIPs: ctx.podIPs,
      ...(ctx.podIPs[0] ? { podIP: ctx.podIPs[0] } : {}),
      ...(deps.hostIPs[0]
        ? { hostIP: deps.hostIPs[0], hostIPs: deps.hostIPs }
        : {}),
    });
  } catch (error) {
    signal.throwIfAborted();
    // bad env references, bad quantities and log dir failures block this container only
    const detail = error instanceof ContainerConfigError ||
        error instanceof RangeError
      ? error.message
      : errorMessage(error);
    return failWithEvent("CreateContainerConfigError", detail);
  }
  let containerId: string;
  STARTED_CONTAINERS[options.type].inc();
  try {
    const res = await deps.runtime.createContainer(
      { podSandboxId: ctx.sandboxId, config, sandboxConfig: ctx.sandboxConfig },
      { signal },
    );
    containerId = res.containerId;
  } catch (error) {
    signal.throwIfAborted();
    // upstream startContainer reports the runtime's status message as is
    return failWithEvent("CreateContainerError", runtimeStatusMessage(error));
  }
  record("Normal", "Created", `Created container: ${container.name}`);
  try {
    await deps.runtime.startContainer({ containerId }, { signal });
  } catch (error) {
    signal.throwIfAborted();
    return failWithEvent("RunContainerError", runtimeStatusMessage(error));
  }
  record("Normal", "Started", `Started container ${container.name}`);
  // upstream links the log for log shippers right after the start, before postStart
  await deps.logLinks?.link({
    podName: pod.metadata.name ?? "",
    podNamespace: pod.metadata.namespace ?? "default",
    containerName: container.name,
    containerId,
  }, `${ctx.sandboxConfig.logDirectory ?? ""}/${config.logPath ?? ""}`);
  const postStart = container.lifecycle?.postStart;
  if (postStart) {
    const failure = await runLifecycleHook(deps.kill, {
      pod,
      containerName: container.name,
      containerId,
      handler: postStart,
    }, { timeoutSeconds: 0, signal });
    if (failure) {
      deps.logger.warn("PostStart hook failed, killing the container", {
        err: failure,
      });
      // the hook's output stays out of the event: it may hold secrets
      record("Warning", "FailedPostStartHook", "PostStartHook failed");
      const view = {
        ...EMPTY_VIEW,
        id: containerId,
        name: container.name,
        sandboxId: ctx.sandboxId,
        state: "running" as const,
      };
      await killContainer(deps.kill, { pod, view, container }, {
        message: "FailedPostStartHook",
        signal,
      });
      return fail("PostStartHookError", failure);
    }
  }
  ctx.started?.add(container.name);
  deps.logger.v(2).info("Started container", {
    container: container.name,
    containerID: containerId,
    restartCount,
  });
  return { action: "StartContainer", target: container.name };
}
