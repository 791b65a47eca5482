/**
 * Harness for the end-to-end static pod tests on a real containerd
 * (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh). The runtime is shared
 * with other test files running in parallel, so every pod name carries a random
 * node name, each test removes only its own sandboxes, and orphan clean-up and
 * container GC (opt-in: `startE2e({ cleanup })`) only see pods of this node.
 */
import { systemClock } from "../../src/clock/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import {
  createKubelet,
  type Kubelet,
} from "../../src/kubelet/create_kubelet.ts";
import {
  type ContainerGcPolicy,
  createContainerGc,
  createContainerLogs,
  createPodSyncer,
  createProbeResults,
  createSysctlAllowlist,
  listRunningPods,
  type PodEnvironmentOptions,
  sysctlAdmission,
} from "../../src/pod/mod.ts";
import type { PodStatus } from "../../src/pod/types.ts";
import {
  ContainerState,
  createCriRuntime,
  type CriRuntime,
} from "../../src/runtime/mod.ts";
import { createPodStatusManager } from "../../src/status/mod.ts";
import { removeTree } from "../_mounts.ts";
import { claimSubnet } from "../_subnets.ts";

export const endpoint = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";
export const IMAGE = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";

/** One runtime container of a static pod, as CRI lists it. */
export interface RuntimeContainer {
  id: string;
  name: string;
  state: ContainerState;
  /** Milliseconds since the epoch. */
  createdAt: number;
  uid: string;
}

/** A running standalone kubelet on a private manifest directory. */
export interface E2e extends AsyncDisposable {
  node: string;
  runtime: CriRuntime;
  /** The kubelet's private `--root-dir` (only with `startE2e({ rootDir: true })`). */
  rootDir: string | undefined;
  readonly kubelet: Kubelet;
  logger: CaptureLogger;
  /** Writes a manifest (text as is, anything else as JSON). */
  write(file: string, manifest: unknown): Promise<void>;
  remove(file: string): Promise<void>;
  /** Stops the kubelet and starts a new one on the same directory. */
  restartKubelet(): Promise<void>;
  /** Runtime containers of static pod `<pod>-<node>`, oldest first. */
  containers(pod: string): Promise<RuntimeContainer[]>;
  /** Runtime sandbox IDs of static pod `<pod>-<node>`. */
  sandboxes(pod: string): Promise<string[]>;
  /** Every status the kubelet recorded for static pod `<pod>-<node>`, in order (all kubelets). */
  statuses(pod: string): PodStatus[];
  /** Pod names (`<pod>-<node>`) of every CreateContainer call, in order (all kubelets). */
  readonly created: string[];
  /**
   * Every RunPodSandbox (by pod name) and StopPodSandbox (by sandbox ID) the kubelets sent, in
   * the order they were sent.
   */
  readonly sandboxCalls: SandboxCall[];
  /** The private pod logs dir. */
  logsDir: string;
}

/** A sandbox call as sent. */
export type SandboxCall = { run: string } | { stop: string };

/** Orphan clean-up and container GC, limited to this test's node. */
export interface E2eCleanup {
  /** Container GC period in ms (default 1 min, as upstream). */
  gcPeriodMs?: number;
  gcPolicy?: ContainerGcPolicy;
}

/** Polls `probe` every 100 ms until it gives a value; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A busybox container running `script` with `sh -c` (`extra` merged in). */
export function shContainer(
  name: string,
  script: string,
  extra: object = {},
): Record<string, unknown> {
  return {
    name,
    image: IMAGE,
    imagePullPolicy: "IfNotPresent",
    command: ["sh", "-c", script],
    ...extra,
  };
}

/** The running ones of `cs`. */
export function running<T extends { state: ContainerState }>(cs: T[]): T[] {
  return cs.filter((c) => c.state === ContainerState.CONTAINER_RUNNING);
}

/**
 * Starts a kubelet against `options.endpoint` (default: the shared one); `rootDir: true` gives
 * it a private root dir (termination-message files).
 */
export async function startE2e(
  options: {
    endpoint?: string;
    rootDir?: boolean;
    cleanup?: E2eCleanup;
    /** Node settings for the configs (cgroups, DNS, hosts file, image user); the root dir is added. */
    environment?: PodEnvironmentOptions;
    /** tmpfs directory for `medium: Memory` emptyDirs. */
    memoryVolumeDir?: string;
    /** Container log links (under `<logsDir>/.containers`) and rotation settings. */
    containerLogs?: {
      containerLogMaxSize?: string;
      containerLogMonitorInterval?: string;
    };
    /** Sysctl admission with these `allowedUnsafeSysctls`. */
    allowedUnsafeSysctls?: string[];
  } = {},
): Promise<E2e> {
  const node = `e2e-${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: "kts-pod-e2e-" });
  await Deno.mkdir(`${dir}/manifests`);
  const rootDir = options.rootDir ? `${dir}/root` : undefined;
  const runtime = createCriRuntime({
    endpoint: options.endpoint ?? endpoint,
    timeoutMs: 60_000,
  });
  const logger = new CaptureLogger();
  const history = new Map<string, PodStatus[]>();
  const created: string[] = [];
  const sandboxCalls: SandboxCall[] = [];
  // the syncer's runtime notes these calls as they are sent
  const notes: {
    [K in "createContainer" | "runPodSandbox" | "stopPodSandbox"]: (
      request: Parameters<CriRuntime[K]>[0],
    ) => void;
  } = {
    createContainer: (r) => created.push(r.sandboxConfig?.metadata?.name ?? ""),
    runPodSandbox: (r) =>
      sandboxCalls.push({ run: r.config?.metadata?.name ?? "" }),
    stopPodSandbox: (r) => sandboxCalls.push({ stop: r.podSandboxId ?? "" }),
  };
  const recording = new Proxy(runtime, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      const note = Object.hasOwn(notes, key)
        ? notes[key as keyof typeof notes] as (request: unknown) => void
        : undefined;
      if (!note) return value.bind(target);
      return (...args: unknown[]) => {
        note(args[0]);
        return value.apply(target, args);
      };
    },
  });
  const mine = (name: string | undefined) => name?.endsWith(`-${node}`);
  const owns = (labels: Readonly<Record<string, string>>) =>
    mine(labels["io.kubernetes.pod.name"]) === true;
  const logs = options.containerLogs
    ? createContainerLogs({
      runtime,
      clock: systemClock,
      logger,
      // beside the test's pod logs, not in the host's /var/log/containers
      linksDir: `${dir}/logs/.containers`,
    }, options.containerLogs)
    : undefined;
  const rotation = new AbortController();
  const rotating = logs?.run(rotation.signal);
  const build = () => {
    // a restarted kubelet starts with an empty status cache, as a new process would
    const statusManager = createPodStatusManager();
    statusManager.onChange((change) => {
      if (change.kind !== "set") return;
      const list = history.get(change.entry.podFullName) ?? [];
      list.push(structuredClone(change.entry.status));
      history.set(change.entry.podFullName, list);
    });
    const probes = createProbeResults();
    const syncer = createPodSyncer(
      {
        runtime: recording,
        images: runtime,
        clock: systemClock,
        logger,
        statusManager,
        probes,
        ...(logs ? { logLinks: logs.links } : {}),
      },
      {
        podLogsDir: `${dir}/logs`,
        ...(rootDir ? { rootDir } : {}),
        ...(options.memoryVolumeDir
          ? { memoryVolumeDir: options.memoryVolumeDir }
          : {}),
        serializeImagePulls: true,
        nodeName: node,
        runtimeRequestTimeoutMs: 60_000,
        ...(options.environment
          ? {
            environment: {
              ...options.environment,
              ...(rootDir ? { rootDir } : {}),
            },
          }
          : {}),
      },
    );
    const cleanup = options.cleanup;
    const k = createKubelet({
      runtime,
      syncer,
      clock: systemClock,
      logger,
      probes: { runtime, statuses: statusManager, results: probes },
      statuses: statusManager,
      ...(options.environment?.podCgroups
        ? { podCgroups: options.environment.podCgroups }
        : {}),
      ...(options.allowedUnsafeSysctls
        ? {
          admission: sysctlAdmission(
            createSysctlAllowlist(options.allowedUnsafeSysctls, {
              kernelRelease: Deno.osRelease(),
            }),
            statusManager,
          ),
        }
        : {}),
      ...(cleanup
        ? {
          listRunningPods: () => listRunningPods(runtime, { owns }),
          containerGc: createContainerGc({
            runtime,
            clock: systemClock,
            logger,
            ...(logs ? { logLinks: logs.links } : {}),
          }, {
            podLogsDir: `${dir}/logs`,
            ...(rootDir ? { rootDir } : {}),
            owns,
            ...(cleanup.gcPolicy ? { policy: cleanup.gcPolicy } : {}),
          }),
        }
        : {}),
    }, {
      nodeName: node,
      staticPodPath: `${dir}/manifests`,
      fileCheckFrequencyMs: 1000,
      runtimeRequestTimeoutMs: 60_000,
      ...(cleanup?.gcPeriodMs
        ? { containerGcPeriodMs: cleanup.gcPeriodMs }
        : {}),
    });
    k.start();
    return k;
  };
  let kubelet = build();
  return {
    node,
    runtime,
    rootDir,
    logger,
    created,
    sandboxCalls,
    logsDir: `${dir}/logs`,
    get kubelet() {
      return kubelet;
    },
    write: (f, m) =>
      Deno.writeTextFile(
        `${dir}/manifests/${f}`,
        // a manifest needs its type, as upstream's decoder requires
        typeof m === "string"
          ? m
          : JSON.stringify({ apiVersion: "v1", kind: "Pod", ...m as object }),
      ),
    remove: (f) => Deno.remove(`${dir}/manifests/${f}`),
    async restartKubelet() {
      await kubelet.stop();
      kubelet = build();
    },
    async containers(pod) {
      const { containers } = await runtime.listContainers({
        filter: {
          labelSelector: { "io.kubernetes.pod.name": `${pod}-${node}` },
        },
      });
      return containers
        .map((c) => ({
          id: c.id,
          name: c.metadata?.name ?? "",
          state: c.state,
          createdAt: Number(c.createdAt / 1_000_000n),
          uid: c.labels["io.kubernetes.pod.uid"] ?? "",
        }))
        .sort((a, b) => a.createdAt - b.createdAt);
    },
    async sandboxes(pod) {
      const { items } = await runtime.listPodSandbox({
        filter: {
          labelSelector: { "io.kubernetes.pod.name": `${pod}-${node}` },
        },
      });
      return items.map((s) => s.id);
    },
    statuses: (pod) => history.get(`default/${pod}-${node}`) ?? [],
    async [Symbol.asyncDispose]() {
      await kubelet.stop();
      rotation.abort();
      await rotating;
      // A call the stopped kubelet aborted may still be finishing inside
      // containerd and make a removal fail for a moment: sweep until none is left.
      await waitFor("this test's sandboxes removed", async () => {
        const listed = await runtime.listPodSandbox({}).catch(() => undefined);
        if (!listed) return undefined;
        const left = listed.items.filter((s) => mine(s.metadata?.name));
        for (const s of left) {
          await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
          await runtime.removePodSandbox({ podSandboxId: s.id }).catch(
            () => {},
          );
        }
        return left.length === 0 ? true : undefined;
      }, 30_000);
      await runtime.close();
      await removeTree(dir).catch(() => {});
    },
  };
}

const CRI_ENV_SCRIPT = new URL("../../scripts/cri_env.sh", import.meta.url)
  .pathname;

/**
 * Runs `scripts/cri_env.sh <command>` with `env` (a private runtime-only instance: its own
 * KTS_CRI_ROOT, bridge and subnet); returns its stdout.
 */
export async function criEnv(
  command: string,
  env: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [CRI_ENV_SCRIPT, command],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  if (!out.success) {
    throw new Error(
      `scripts/cri_env.sh ${command} failed (exit ${out.code}): ${
        decode(out.stderr)
      }`,
    );
  }
  return decode(out.stdout);
}

/** A private runtime-only containerd started for one test (see {@linkcode privateCri}). */
export interface PrivateCri extends AsyncDisposable {
  endpoint: string;
  /** The instance's cri_env variables (root, bridge, subnet). */
  env: Record<string, string>;
}

/**
 * Why {@linkcode privateCri} cannot run here: it needs the shared environment (its endpoint
 * and root, from `scripts/cri_env.sh`) and root on Linux. False when it can.
 */
export const privateCriMissing = !endpoint ||
  !Deno.env.get("KUBELET_TS_CRI_ROOT") ||
  !(Deno.build.os === "linux" && Deno.uid() === 0);

/** Which runtime binaries a {@linkcode privateCri} runs; absent → Debian's from PATH. */
export interface PrivateCriBinaries {
  /** containerd; its ctr and runc shim are taken from the same folder. */
  containerd: string;
  /** The runc the shim runs. */
  runc: string;
}

/**
 * Starts a private runtime-only containerd (`scripts/cri_env.sh` with its own root, bridge and
 * a claimed free /16, tests/_subnets.ts). A whole kubelet process needs one: it stops every pod
 * it does not know, so on the shared containerd it would kill other test files' containers.
 */
export async function privateCri(
  tag: string,
  binaries?: PrivateCriBinaries,
): Promise<PrivateCri> {
  const id = crypto.randomUUID().slice(0, 6);
  const claim = await claimSubnet();
  const env: Record<string, string> = {
    KTS_CRI_ROOT: `${Deno.env.get("KUBELET_TS_CRI_ROOT")}-${tag}-${id}`,
    KTS_CRI_RUNTIME_ONLY: "1",
    KTS_CRI_BRIDGE: `kts${tag.slice(0, 4)}${id}`,
    KTS_CRI_SUBNET: claim.subnet,
    ...(binaries
      ? {
        KTS_CRI_CONTAINERD_BIN: binaries.containerd,
        KTS_CRI_RUNC: binaries.runc,
      }
      : {}),
  };
  const lines = await criEnv("up", env).catch(async (e) => {
    await claim[Symbol.asyncDispose]();
    throw e;
  });
  const found = /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(lines)?.[1];
  if (!found) {
    await criEnv("down", env).catch(() => {});
    await claim[Symbol.asyncDispose]();
    throw new Error(`scripts/cri_env.sh up gave no endpoint: ${lines}`);
  }
  return {
    endpoint: found,
    env,
    async [Symbol.asyncDispose]() {
      await criEnv("down", env).catch(() => {});
      await claim[Symbol.asyncDispose]();
    },
  };
}

/**
 * A standalone kubelet's config: static pods from `<dir>/manifests`, no healthz, an open API,
 * and a cgroup root of its own (a whole kubelet with every permission removes the pod cgroups
 * it does not know under its root, other tests' pods included).
 */
export function standaloneConfig(
  dir: string,
  endpoint: string,
  cgroupRoot: string,
): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    `staticPodPath: ${dir}/manifests`,
    "fileCheckFrequency: 1s",
    `containerRuntimeEndpoint: ${endpoint}`,
    `podLogsDir: ${dir}/logs`,
    `cgroupRoot: ${cgroupRoot}`,
    "healthzPort: 0",
    "authentication:",
    "  anonymous:",
    "    enabled: true",
    "  webhook:",
    "    enabled: false",
    "authorization:",
    "  mode: AlwaysAllow",
    "",
  ].join("\n");
}
