/**
 * Carries out one pod's planned actions (the "act" half of kuberuntime's `SyncPod`, in its
 * order): kill the pod or the containers to kill, prune superseded init containers, create the
 * sandbox if needed, then start the ephemeral containers, the next init containers and the
 * regular containers. Each
 * step's outcome is a {@linkcode SyncResult}; only infrastructure failures (runtime
 * unreachable, abort) reject.
 *
 * @module
 */

import {
  formatPod,
  type PodEventRecorder,
  podReference,
} from "../pod_events.ts";
import type { Logger } from "../../log/mod.ts";
import type { RuntimeService } from "../../runtime/mod.ts";
import {
  generatePodSandboxConfig,
  podLogDirectory,
  type PodSandboxConfigInit,
} from "../containers/container_config.ts";
import {
  type DnsOptions,
  MISSING_CLUSTER_DNS_MESSAGE,
  missingClusterDns,
} from "../containers/dns_config.ts";
import { nodeReference } from "../../events/mod.ts";
import {
  startedPods,
  startedUserNamespacedPods,
  startedUserNamespacedPodsErrors,
} from "../../metrics/mod.ts";
import type { InitContainerCleaner } from "./init_container_cleanup.ts";
import type { PodActions } from "./pod_plan.ts";
import {
  type PodEnvironment,
  sandboxConfigFailure,
} from "../containers/pod_environment.ts";
import { killContainer, type KillDeps, killPod } from "./pod_kill.ts";
import { runtimeErrorText } from "../containers/runtime_messages.ts";
import {
  NO_USER_NAMESPACES,
  type PodUserNamespaces,
  type RuntimeHandlerResolver,
  sandboxNamespaces,
} from "./runtime_class.ts";
import {
  startContainer,
  type StartContainerDeps,
  type StartContext,
} from "./start_container.ts";
import type { Pod, PodRuntimeStatus, SyncResult } from "../types.ts";
import { isSidecar } from "../types.ts";
import { errorMessage } from "../../util/error_message.ts";

const startedPodsTotal = startedPods.labels();
const startedUsernsTotal = startedUserNamespacedPods.labels();
const startedUsernsErrors = startedUserNamespacedPodsErrors.labels();

/** What {@linkcode executePodActions} acts with. */
export interface ExecuteDeps {
  runtime: RuntimeService;
  logger: Logger;
  kill: KillDeps;
  start: StartContainerDeps;
  initContainers: InitContainerCleaner;
  /** Creates a directory with parents (the pod's log directory). */
  mkdir: (path: string) => Promise<void>;
  podLogsDir: string;
  /** The handler of each pod's RuntimeClass. */
  runtimeHandlers: RuntimeHandlerResolver;
  /** Each pod's user namespace; omitted → `hostUsers: false` is refused (no support). */
  userNamespaces?: PodUserNamespaces;
  dns?: DnsOptions;
  environment?: PodEnvironment;
  /** SandboxChanged and FailedCreatePodSandBox events; omitted → none. */
  events?: PodEventRecorder;
}

/** One pod's plan and the runtime view it was made from. */
export interface ExecuteInput {
  pod: Pod;
  status: PodRuntimeStatus;
  actions: PodActions;
  signal: AbortSignal;
  /** Logger with the pod's identity attached. */
  logger: Logger;
}

export async function executePodActions(
  deps: ExecuteDeps,
  input: ExecuteInput,
): Promise<SyncResult[]> {
  const results = await execute(deps, input);
  // upstream SyncPod counts the sandboxes it creates for hostUsers false pods, and those
  // whose sync then had any failure
  const { pod, actions } = input;
  if (
    actions.createSandbox &&
    (pod.spec as { hostUsers?: boolean }).hostUsers === false &&
    results.some((r) => r.action === "CreatePodSandbox")
  ) {
    startedUsernsTotal.inc();
    if (results.some((r) => r.reason !== undefined)) startedUsernsErrors.inc();
  }
  return results;
}

async function execute(
  deps: ExecuteDeps,
  input: ExecuteInput,
): Promise<SyncResult[]> {
  const { pod, status, actions, signal, logger } = input;
  const results: SyncResult[] = [];
  const failed = () => results.some((r) => r.reason !== undefined);
  if (actions.createSandbox && actions.sandboxId) {
    logger.info("Pod sandbox changed, it will be killed and re-created", {
      sandboxID: actions.sandboxId,
    });
    deps.events?.event(
      podReference(pod),
      "Normal",
      "SandboxChanged",
      "Pod sandbox changed, it will be killed and re-created.",
    );
  }
  if (actions.killPod) {
    logger.v(2).info("Stopping pod", {
      createSandbox: actions.createSandbox,
    });
    results.push(...await killPod(deps.kill, { pod, status }, { signal }));
    if (failed()) return results;
    if (actions.createSandbox) {
      await deps.initContainers.purge(pod, status, signal);
    }
  } else {
    for (const kill of actions.containersToKill.values()) {
      const view = status.containers.find((c) => c.id === kill.containerId)!;
      const r = await killContainer(deps.kill, {
        pod,
        view,
        container: kill.container,
      }, {
        reason: kill.reason,
        message: kill.message,
        signal,
      });
      results.push(r);
      if (r.reason) return results;
    }
  }
  await deps.initContainers.prune(pod, status, signal);

  let sandboxId = actions.sandboxId;
  // A host-network pod's addresses are the node's (the runtime reports none for its sandbox):
  // upstream SyncPod reads them back from the API status generateAPIPodStatus fills in, so
  // status.podIP in the environment is the node IP from the first start on.
  const hostNetwork = pod.spec.hostNetwork === true;
  let podIPs = hostNetwork
    ? [...deps.start.hostIPs]
    : status.sandboxes[0]
    ? [status.sandboxes[0].ip, ...status.sandboxes[0].additionalIps]
    : [];
  let nodeOptions: { dns?: DnsOptions } = {};
  let runtimeHandler = "";
  let userNamespace;
  const configFailed = (error: unknown): SyncResult[] => {
    results.push(sandboxConfigFailure(pod, error, actions.createSandbox));
    if (actions.createSandbox) {
      deps.logger.error("Failed to generate sandbox config for pod", {
        pod: formatPod(pod),
        err: errorMessage(error),
      });
      // upstream SyncPod reports every createPodSandbox error, the config's included
      deps.events?.event(
        podReference(pod),
        "Warning",
        "FailedCreatePodSandBox",
        `Failed to create pod sandbox: ${errorMessage(error)}`,
      );
    }
    return results;
  };
  try {
    nodeOptions = await deps.environment?.sandboxOptions(pod) ?? {};
    ({ runtimeHandler, userNamespace } = await sandboxNamespaces(
      deps.runtimeHandlers,
      deps.userNamespaces ?? NO_USER_NAMESPACES,
      pod,
      { signal },
    ));
  } catch (error) {
    signal.throwIfAborted();
    return configFailed(error);
  }
  const dns = nodeOptions.dns ?? deps.dns;
  if (dns && missingClusterDns(pod, dns)) {
    deps.events?.event(
      nodeReference(deps.start.nodeName),
      "Warning",
      "MissingClusterDNS",
      MISSING_CLUSTER_DNS_MESSAGE,
    );
    deps.events?.event(
      podReference(pod),
      "Warning",
      "MissingClusterDNS",
      `pod: "${formatPod(pod)}". ${MISSING_CLUSTER_DNS_MESSAGE}`,
    );
  }
  let sandboxConfig;
  try {
    sandboxConfig = generatePodSandboxConfig(pod, {
      podLogsDir: deps.podLogsDir,
      attempt: actions.attempt,
      ...(deps.dns ? { dns: deps.dns } : {}),
      ...nodeOptions,
      userNamespace: userNamespace ?? null,
    });
  } catch (error) {
    // a host name the kernel cannot hold (upstream GetNodenameForKernel)
    if (!(error instanceof RangeError)) throw error;
    return configFailed(error);
  }
  if (actions.createSandbox) {
    const created = await createSandbox(deps, pod, sandboxConfig, {
      runtimeHandler,
      signal,
    });
    results.push(created.result);
    if (!created.id) return results;
    sandboxId = created.id;
    if (!hostNetwork) podIPs = created.ips;
  }
  if (!actions.createSandbox && actions.killPod) return results;

  const ctx: StartContext = {
    pod,
    status,
    sandboxId,
    sandboxConfig,
    podIPs: podIPs.filter((ip) => ip),
    signal,
    started: new Set(),
  };
  // upstream starts ephemeral containers before init containers, so a failing init container
  // can still be debugged
  const ephemeral = pod.spec.ephemeralContainers ?? [];
  for (const index of actions.ephemeralContainersToStart) {
    const container = ephemeral[index]!;
    results.push(
      await startContainer(deps.start, ctx, {
        container,
        type: "ephemeral",
        ...(container.targetContainerName
          ? { target: container.targetContainerName }
          : {}),
      }),
    );
  }
  const inits = pod.spec.initContainers ?? [];
  for (const index of actions.initContainersToStart) {
    const container = inits[index]!;
    const r = await startContainer(deps.start, ctx, {
      container,
      type: "init",
    });
    results.push(r);
    if (r.reason && !isSidecar(container)) return results;
  }
  for (const index of actions.containersToStart) {
    const container = pod.spec.containers[index]!;
    results.push(
      await startContainer(deps.start, ctx, {
        container,
        type: "container",
      }),
    );
  }
  return results;
}

async function createSandbox(
  deps: ExecuteDeps,
  pod: Pod,
  config: PodSandboxConfigInit,
  options: { runtimeHandler: string; signal: AbortSignal },
): Promise<{ id: string; ips: string[]; result: SyncResult }> {
  const { runtimeHandler, signal } = options;
  const name = pod.metadata.name ?? "";
  try {
    await deps.mkdir(podLogDirectory(deps.podLogsDir, pod));
    startedPodsTotal.inc();
    const res = await deps.runtime.runPodSandbox(
      { config, runtimeHandler },
      { signal },
    );
    let ips: string[] = [];
    try {
      const st = await deps.runtime.podSandboxStatus({
        podSandboxId: res.podSandboxId,
      }, { signal });
      const net = st.status?.network;
      if (net) ips = [net.ip, ...net.additionalIps.map((p) => p.ip)];
    } catch (error) {
      signal.throwIfAborted();
      deps.logger.warn("Failed to read the new pod sandbox status", {
        pod: name,
        err: errorMessage(error),
      });
    }
    return {
      id: res.podSandboxId,
      ips,
      result: { action: "CreatePodSandbox", target: res.podSandboxId },
    };
  } catch (error) {
    signal.throwIfAborted();
    // upstream createPodSandbox formats the CRI error itself
    const message = `Failed to create pod sandbox: ${runtimeErrorText(error)}`;
    deps.logger.error("Failed to create pod sandbox", {
      pod: name,
      err: errorMessage(error),
    });
    deps.events?.event(
      podReference(pod),
      "Warning",
      "FailedCreatePodSandBox",
      message,
    );
    return {
      id: "",
      ips: [],
      result: {
        action: "CreatePodSandbox",
        target: name,
        reason: "CreatePodSandboxError",
        message,
      },
    };
  }
}
