/**
 * Wiring of the kubelet API (HTTPS on `address:port`, and `readOnlyPort` when non-zero): turns
 * the configuration and the running kubelet into `runApiServer`'s host and configuration. No
 * business logic lives here.
 *
 * Upstream refuses to start when the API cannot be set up (for example webhook authentication
 * without a kubeconfig, the config-file defaults in standalone mode). We log why and keep
 * running without the API: a standalone kubelet stays useful, and nothing is served that the
 * configuration did not secure.
 *
 * @module
 */

import type { Clock } from "../clock/mod.ts";
import type { Kubelet } from "./create_kubelet.ts";
import type { Logger } from "../log/mod.ts";
import { listRunningPods } from "../pod/mod.ts";
import {
  type ImageService,
  isNotFound,
  type RuntimeService,
} from "../runtime/mod.ts";
import {
  type ApiServerConfig,
  type ApiServerHost,
  type ContainerRef,
  CpuRates,
  HttpError,
  type LogTarget,
  type ResourceStats,
  runApiServer,
  selfSignedFiles,
} from "../server/mod.ts";
import {
  logContainer,
  podsWithStatus,
  type StatusSource,
} from "../status/mod.ts";
import { createStreamingHost } from "./streaming_host.ts";
import { type StatsDeps, statsSummary } from "./stats_summary.ts";
import { readNodeUsage } from "./node_usage.ts";
import { cadvisorStats } from "./cadvisor_stats.ts";
import { parseGoDuration } from "../util/go_duration.ts";
import type { CsrApi, NodeAddress } from "../api/mod.ts";
import { startServingCertificates } from "./serving_certificates.ts";
import { errorMessage } from "../util/error_message.ts";
import { systemCgroups } from "./system_cgroups.ts";

/** The configuration and flags the kubelet API reads. */
export interface KubeletApiContext {
  config: {
    enableServer?: boolean | undefined;
    podLogsDir?: string | undefined;
    address?: string | undefined;
    port?: number | undefined;
    readOnlyPort?: number | undefined;
    tlsCertFile?: string | undefined;
    tlsPrivateKeyFile?: string | undefined;
    tlsMinVersion?: string | undefined;
    tlsCipherSuites?: string[] | undefined;
    serverTLSBootstrap?: boolean | undefined;
    enableDebuggingHandlers?: boolean | undefined;
    enableSystemLogHandler?: boolean | undefined;
    enableSystemLogQuery?: boolean | undefined;
    kubeletCgroups?: string | undefined;
    systemCgroups?: string | undefined;
    cgroupRoot?: string | undefined;
    cgroupsPerQOS?: boolean | undefined;
    cgroupDriver?: string | undefined;
    authentication?: {
      x509?: { clientCAFile?: string | undefined } | undefined;
      webhook?: {
        enabled?: boolean | undefined;
        cacheTTL?: string | undefined;
      } | undefined;
      anonymous?: { enabled?: boolean | undefined } | undefined;
    } | undefined;
    authorization?: {
      mode?: string | undefined;
      webhook?: {
        cacheAuthorizedTTL?: string | undefined;
        cacheUnauthorizedTTL?: string | undefined;
      } | undefined;
    } | undefined;
  };
  flags: {
    kubeconfig?: string | undefined;
    certDir?: string | undefined;
    rootDir?: string | undefined;
    /** `--runtime-cgroups`: the `runtime` system container. */
    runtimeCgroups?: string | undefined;
  };
}

/** What the kubelet API reads from the running kubelet. */
export interface KubeletApiDeps {
  clock: Clock;
  logger: Logger;
  kubelet: Pick<Kubelet, "podConfig" | "syncLoop">;
  statuses: StatusSource;
  runtime:
    & Pick<
      RuntimeService,
      | "listPodSandbox"
      | "listContainers"
      | "containerStatus"
      | "listContainerStats"
      | "exec"
      | "attach"
      | "portForward"
      | "execSync"
      | "listPodSandboxStats"
    >
    & Pick<ImageService, "imageFsInfo">;
  /** The host's files: the root cgroup's usage (node CPU and memory); omitted → not reported. */
  hostFiles?: StatsDeps["hostFiles"];
  /** API server mode: what the serving certificate requests need. */
  cluster?: {
    csr: CsrApi;
    /** The Node's status addresses as last reported. */
    addresses(): readonly NodeAddress[] | undefined;
  };
}

/** CRI container states by number, as the `container_state` label names them. */
const CONTAINER_STATES = ["created", "running", "exited", "unknown"];

/** Ready sandboxes and containers by state, for `/metrics`. */
async function runtimeCounts(
  runtime: KubeletApiDeps["runtime"],
): Promise<{ runningPods: number; containers: Record<string, number> }> {
  const [{ items }, { containers }] = await Promise.all([
    runtime.listPodSandbox({}),
    runtime.listContainers({}),
  ]);
  const counts: Record<string, number> = {};
  for (const c of containers) {
    const state = CONTAINER_STATES[c.state] ?? "unknown";
    counts[state] = (counts[state] ?? 0) + 1;
  }
  return {
    runningPods: items.filter((s) => s.state === 0).length,
    containers: counts,
  };
}

/**
 * Running containers' CPU, memory and start time (CRI) and the node's CPU time and memory
 * working set (root cgroup).
 */
async function resourceStats(
  runtime: KubeletApiDeps["runtime"],
  clock: Clock,
  hostFs: KubeletApiDeps["hostFiles"],
): Promise<ResourceStats> {
  const [{ stats }, { containers }] = await Promise.all([
    runtime.listContainerStats({}),
    runtime.listContainers({ filter: { state: { state: CONTAINER_RUNNING } } }),
  ]);
  const started = new Map(
    containers.map((c) => [c.id, Number(c.createdAt / 1_000_000n) / 1000]),
  );
  const out: ResourceStats = { containers: [] };
  for (const s of stats) {
    const labels = s.attributes?.labels ?? {};
    const id = s.attributes?.id ?? "";
    const cpu = s.cpu?.usageCoreNanoSeconds?.value;
    const memory = s.memory?.workingSetBytes?.value;
    const swapUsed = s.swap?.swapUsageBytes?.value;
    const swapFree = s.swap?.swapAvailableBytes?.value;
    const start = started.get(id);
    out.containers.push({
      namespace: labels["io.kubernetes.pod.namespace"] ?? "",
      pod: labels["io.kubernetes.pod.name"] ?? "",
      container: labels["io.kubernetes.container.name"] ?? "",
      timeMs: Number(
        (s.cpu?.timestamp ?? s.memory?.timestamp ?? 0n) / 1_000_000n,
      ),
      ...(cpu !== undefined ? { cpuCoreNanoSeconds: Number(cpu) } : {}),
      ...(memory !== undefined
        ? { memoryWorkingSetBytes: Number(memory) }
        : {}),
      ...(start !== undefined ? { startTimeSeconds: start } : {}),
      ...(swapUsed !== undefined ? { swapUsageBytes: Number(swapUsed) } : {}),
      ...(swapFree !== undefined
        ? { swapAvailableBytes: Number(swapFree) }
        : {}),
    });
  }
  if (hostFs) {
    const usage = await readNodeUsage({
      fs: hostFs,
      memory: () => Deno.systemMemoryInfo(),
      now: () => clock.now(),
    });
    out.node = {
      timeMs: usage.timeMs,
      ...(usage.cpuCoreNanoSeconds !== undefined
        ? { cpuCoreNanoSeconds: usage.cpuCoreNanoSeconds }
        : {}),
      ...(usage.memoryWorkingSetBytes !== undefined
        ? { memoryWorkingSetBytes: usage.memoryWorkingSetBytes }
        : {}),
      ...nodeSwap(),
    };
  }
  return out;
}

/** The machine's swap in use (`/proc/meminfo` through Deno); nothing without the sys grant. */
function nodeSwap(): { swapUsageBytes?: number } {
  try {
    const m = Deno.systemMemoryInfo();
    return { swapUsageBytes: m.swapTotal - m.swapFree };
  } catch {
    return {};
  }
}

/** The node's log directory `/logs/` serves (upstream's fixed path). */
const NODE_LOG_DIR = "/var/log";

/** CRI `CONTAINER_RUNNING`. */
const CONTAINER_RUNNING = 1;

function runtimeId(containerId: string): string {
  return containerId.replace(/^[^/]*:\/\//, "");
}

/**
 * The log file of a container's current or previous instance, from the pod manager, the
 * status cache and CRI `ContainerStatus` (upstream `validateContainerLogStatus` then the
 * runtime's `logPath`); the errors and their texts are upstream's.
 */
async function containerLogTarget(
  deps: KubeletApiDeps,
  ref: ContainerRef,
  previous: boolean,
): Promise<LogTarget> {
  const pod = deps.kubelet.podConfig.pods().find((p) =>
    p.metadata.namespace === ref.namespace && p.metadata.name === ref.pod
  );
  if (!pod) throw new HttpError(404, `pod "${ref.pod}" does not exist`);
  const specs = [
    ...pod.spec.containers,
    ...(pod.spec.initContainers ?? []),
    ...(pod.spec.ephemeralContainers ?? []),
  ];
  if (!specs.some((c) => c.name === ref.container)) {
    throw new HttpError(
      404,
      `container "${ref.container}" not found in pod "${ref.pod}"`,
    );
  }
  const status = pod.metadata.uid
    ? deps.statuses.getPodStatus(pod.metadata.uid)
    : undefined;
  const container = [
    ...(status?.containerStatuses ?? []),
    ...(status?.initContainerStatuses ?? []),
    ...(status?.ephemeralContainerStatuses ?? []),
  ].find((c) => c.name === ref.container);
  const what = `container "${ref.container}" in pod "${ref.pod}"`;
  const picked = logContainer(container, ref.pod, ref.container, previous);
  if ("error" in picked) throw new HttpError(400, picked.error);
  const id = picked.id;
  const containerId = runtimeId(id);
  let path: string | undefined;
  try {
    path = (await deps.runtime.containerStatus({ containerId })).status
      ?.logPath;
  } catch (cause) {
    if (!isNotFound(cause)) throw cause;
    throw new HttpError(404, `${what} is gone from the runtime`, { cause });
  }
  if (!path) throw new HttpError(404, `${what} has no log file`);
  return { path, containerId };
}

function ms(value: string | undefined, fallback: number): number {
  return value ? parseGoDuration(value) : fallback;
}

/** The API server configuration of a kubelet configuration (config-file defaults). */
export function kubeletApiConfig(ctx: KubeletApiContext): ApiServerConfig {
  const { config, flags } = ctx;
  const authn = config.authentication ?? {};
  const authz = config.authorization ?? {};
  return {
    address: config.address || "0.0.0.0",
    port: config.port ?? 10250,
    readOnlyPort: config.readOnlyPort ?? 0,
    tlsCertFile: config.tlsCertFile,
    tlsPrivateKeyFile: config.tlsPrivateKeyFile,
    tlsMinVersion: config.tlsMinVersion,
    tlsCipherSuites: config.tlsCipherSuites,
    certDir: flags.certDir || "/var/lib/kubelet/pki",
    clientCAFile: authn.x509?.clientCAFile,
    anonymousAuth: authn.anonymous?.enabled ?? false,
    webhookAuthn: {
      enabled: authn.webhook?.enabled ?? true,
      cacheTtlMs: ms(authn.webhook?.cacheTTL, 120_000),
    },
    authorizationMode: authz.mode || "Webhook",
    webhookAuthz: {
      allowedTtlMs: ms(authz.webhook?.cacheAuthorizedTTL, 300_000),
      deniedTtlMs: ms(authz.webhook?.cacheUnauthorizedTTL, 30_000),
    },
    enableDebuggingHandlers: config.enableDebuggingHandlers ?? true,
    enableSystemLogHandler: config.enableSystemLogHandler ?? true,
    kubeconfig: flags.kubeconfig,
  };
}

/**
 * Serves the kubelet API until `options.signal` aborts; resolves once closed, or at once when
 * `enableServer` is false or the API cannot be set up (logged).
 */
export async function runKubeletApi(
  deps: KubeletApiDeps,
  ctx: KubeletApiContext & {
    nodeName: string;
    resyncIntervalMs: number;
    signal: AbortSignal;
  },
): Promise<void> {
  if (ctx.config.enableServer === false) return;
  const logger = deps.logger.with({ component: "kubelet-api" });
  const startTimeMs = deps.clock.now();
  const cpuRates = new CpuRates();
  const pods = podsWithStatus(
    () => deps.kubelet.podConfig.pods(),
    deps.statuses,
  );
  // As upstream, /configz names the self-signed pair served when none is configured.
  const c = ctx.config;
  const selfSigned = selfSignedFiles(ctx.flags.certDir);
  const shownConfig: Record<string, unknown> =
    !c.serverTLSBootstrap && !c.tlsCertFile && !c.tlsPrivateKeyFile
      ? {
        ...c,
        tlsCertFile: selfSigned.certFile,
        tlsPrivateKeyFile: selfSigned.keyFile,
      }
      : c;
  const host: ApiServerHost = {
    clock: deps.clock,
    logger,
    syncLoop: deps.kubelet.syncLoop,
    resyncIntervalMs: ctx.resyncIntervalMs,
    nodeName: ctx.nodeName,
    pods,
    runningPods: () => listRunningPods(deps.runtime),
    config: () => shownConfig,
    runtimeCounts: () => runtimeCounts(deps.runtime),
    resourceStats: () =>
      resourceStats(deps.runtime, deps.clock, deps.hostFiles),
    cadvisorStats: () =>
      cadvisorStats({
        runtime: deps.runtime,
        ...(deps.hostFiles
          ? {
            node: {
              fs: deps.hostFiles,
              memory: () => Deno.systemMemoryInfo(),
              now: () => deps.clock.now(),
            },
          }
          : {}),
      }),
    streaming: createStreamingHost(deps),
    statsSummary: () =>
      statsSummary({
        clock: deps.clock,
        runtime: deps.runtime,
        nodeName: ctx.nodeName,
        rootDir: ctx.flags.rootDir || "/var/lib/kubelet",
        startTimeMs,
        podLogsDir: ctx.config.podLogsDir || "/var/log/pods",
        ...(deps.hostFiles ? { hostFiles: deps.hostFiles } : {}),
        cpuRates,
        systemCgroups: systemCgroups({
          ...ctx.config,
          runtimeCgroups: ctx.flags.runtimeCgroups,
        }),
      }),
    nodeLogs: { logDir: () => NODE_LOG_DIR },
    logs: {
      podLogsDir: ctx.config.podLogsDir || "/var/log/pods",
      containerLog: (ref, { previous }) =>
        containerLogTarget(deps, ref, previous),
      containerRunning: async (containerId) => {
        try {
          const response = await deps.runtime.containerStatus({ containerId });
          return response.status?.state === CONTAINER_RUNNING;
        } catch (cause) {
          if (isNotFound(cause)) return false;
          throw cause;
        }
      },
    },
  };
  if (ctx.config.enableSystemLogQuery) {
    logger.warn(
      "enableSystemLogQuery is not applied: /logs/ serves the node's log files without the query parameters of NodeLogQuery",
    );
  }
  try {
    const config = kubeletApiConfig(ctx);
    const serving = ctx.config.serverTLSBootstrap
      ? await startServingCertificates({
        clock: deps.clock,
        logger: logger.with({ component: "serving-cert" }),
        csr: deps.cluster?.csr,
        addresses: () => deps.cluster?.addresses(),
      }, {
        nodeName: ctx.nodeName,
        certDir: config.certDir ?? "/var/lib/kubelet/pki",
        tlsCertFile: config.tlsCertFile,
        tlsPrivateKeyFile: config.tlsPrivateKeyFile,
        signal: ctx.signal,
      })
      : undefined;
    await Promise.all([
      runApiServer(host, {
        config,
        signal: ctx.signal,
        hostname: ctx.nodeName,
        ...(serving ? { servingCertificates: serving } : {}),
      }),
      serving?.done,
    ]);
  } catch (cause) {
    logger.error("Cannot serve the kubelet API", {
      err: errorMessage(cause),
    });
  } finally {
    pods.close();
  }
}
