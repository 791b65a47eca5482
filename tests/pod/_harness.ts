/** Test harness: a whole standalone kubelet on the simulated runtime with a temp manifest dir. */

import { FakeClock } from "../../src/clock/testing.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import {
  createKubelet,
  type Kubelet,
} from "../../src/kubelet/create_kubelet.ts";
import {
  type ContainerGcPolicy,
  createContainerGc,
  createPodSyncer,
  createProbeResults,
  listRunningPods,
  type ProbeResults,
} from "../../src/pod/mod.ts";
import {
  createSimRuntime,
  type SimRuntime,
  type SimScenario,
} from "../../src/runtime/sim/mod.ts";
import {
  createPodStatusManager,
  type PodStatusManager,
} from "../../src/status/mod.ts";

export const NODE = "node1";

/** A kubelet on a shared runtime + clock; several can run one after another (restart tests). */
export interface Harness extends AsyncDisposable {
  dir: string;
  clock: FakeClock;
  runtime: SimRuntime;
  kubelet: Kubelet;
  statusManager: PodStatusManager;
  /** The probe results shared by the prober and the syncer of the current kubelet. */
  probeResults: ProbeResults;
  logger: CaptureLogger;
  /** Writes (or replaces) a manifest file. */
  write(file: string, text: string): Promise<void>;
  remove(file: string): Promise<void>;
  /** Lists the sources, then waits until the kubelet is idle. */
  settle(): Promise<void>;
  /** Moves fake time forward in 1 s steps, letting the kubelet react after each. */
  tick(ms: number): Promise<void>;
  /** Restarts the kubelet (not the runtime): a new syncer, status manager and workers. */
  restartKubelet(): Promise<void>;
  /** Containers of a static pod (`<name>-node1`), by container name. */
  containers(
    podName: string,
    containerName?: string,
  ): Promise<SimContainerInfo[]>;
  /** The last phase the status manager recorded for the pod (kept after cleanup). */
  phase(podName: string): string | undefined;
}

export interface SimContainerInfo {
  id: string;
  name: string;
  state: string;
  podUid: string;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
}

export async function startHarness(
  options: {
    manifests?: Record<string, string>;
    scenario?: SimScenario;
    /** Also read pods from this URL through `fetch`. */
    http?: { url: string; fetch: typeof fetch };
    /** Container GC policy (default upstream's: 0 s, 1 per container, no node limit). */
    gcPolicy?: ContainerGcPolicy;
  } = {},
): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "kts-pod-it-" });
  await Deno.mkdir(`${dir}/manifests`);
  for (const [file, text] of Object.entries(options.manifests ?? {})) {
    await Deno.writeTextFile(`${dir}/manifests/${file}`, text);
  }
  const clock = new FakeClock();
  const runtime = createSimRuntime({ clock, scenario: options.scenario ?? {} });
  const logger = new CaptureLogger();
  let statusManager = createPodStatusManager();
  let probeResults = createProbeResults();
  const lastPhase = new Map<string, string>();

  function build(): Kubelet {
    statusManager = createPodStatusManager();
    probeResults = createProbeResults();
    statusManager.onChange((change) => {
      if (change.kind !== "set") return;
      const phase = change.entry.status.phase;
      if (phase) lastPhase.set(change.entry.podFullName, phase);
    });
    const syncer = createPodSyncer(
      {
        runtime,
        images: runtime,
        clock,
        logger,
        statusManager,
        probes: probeResults,
      },
      { podLogsDir: `${dir}/logs`, serializeImagePulls: true, nodeName: NODE },
    );
    return createKubelet({
      runtime,
      syncer,
      clock,
      logger,
      probes: { runtime, statuses: statusManager, results: probeResults },
      listRunningPods: () => listRunningPods(runtime),
      containerGc: createContainerGc({ runtime, clock, logger }, {
        podLogsDir: `${dir}/logs`,
        ...(options.gcPolicy ? { policy: options.gcPolicy } : {}),
      }),
      statuses: statusManager,
      ...(options.http ? { fetch: options.http.fetch } : {}),
    }, {
      nodeName: NODE,
      staticPodPath: `${dir}/manifests`,
      ...(options.http ? { staticPodURL: options.http.url } : {}),
      watchManifests: false,
      random: () => 0,
    });
  }

  let kubelet = build();
  kubelet.start();
  const h: Harness = {
    dir,
    clock,
    runtime,
    get kubelet() {
      return kubelet;
    },
    get statusManager() {
      return statusManager;
    },
    get probeResults() {
      return probeResults;
    },
    logger,
    write: (file, text) => Deno.writeTextFile(`${dir}/manifests/${file}`, text),
    remove: (file) => Deno.remove(`${dir}/manifests/${file}`),
    async settle() {
      await kubelet.refreshSources();
      await kubelet.whenIdle();
    },
    async tick(ms) {
      for (let t = 0; t < ms; t += 1000) {
        await clock.advance(Math.min(1000, ms - t));
        // Idle, or busy waiting on the fake clock (e.g. a stop within the grace period).
        await Promise.race([kubelet.whenIdle(), turns(200)]);
      }
    },
    async restartKubelet() {
      await kubelet.stop();
      kubelet = build();
      kubelet.start();
      await h.settle();
    },
    async containers(podName, containerName) {
      await runtime.listContainers({}); // settles timed exits
      const out: SimContainerInfo[] = [];
      for (const c of runtime.containers.values()) {
        if (c.labels["io.kubernetes.pod.name"] !== `${podName}-${NODE}`) {
          continue;
        }
        if (containerName && c.metadata.name !== containerName) continue;
        out.push({
          id: c.id,
          name: c.metadata.name,
          state: c.state,
          podUid: c.labels["io.kubernetes.pod.uid"] ?? "",
          startedAt: c.startedAt,
          finishedAt: c.finishedAt,
          exitCode: c.exitCode,
        });
      }
      return out.sort((a, b) => a.startedAt - b.startedAt);
    },
    phase(podName) {
      return lastPhase.get(`default/${podName}-${NODE}`);
    },
    async [Symbol.asyncDispose]() {
      await kubelet.stop();
      await runtime.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
  return h;
}

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
}

/** A pod manifest with one or more containers. */
export function podYaml(
  name: string,
  spec: {
    containers: { name: string; command: string[]; image?: string }[];
    initContainers?: { name: string; command: string[] }[];
    restartPolicy?: string;
    grace?: number;
  },
): string {
  const c = (x: { name: string; command: string[]; image?: string }) => ({
    name: x.name,
    image: x.image ?? "kts.local/busybox:latest",
    imagePullPolicy: "IfNotPresent",
    command: x.command,
  });
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: spec.restartPolicy ?? "Always",
      terminationGracePeriodSeconds: spec.grace ?? 5,
      ...(spec.initContainers
        ? { initContainers: spec.initContainers.map(c) }
        : {}),
      containers: spec.containers.map(c),
    },
  });
}
