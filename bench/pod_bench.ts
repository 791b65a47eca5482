/**
 * Pod lifecycle benchmark (one run, human-readable lines with the target ratios):
 *
 * (a) pod start latency on containerd (skipped without `KUBELET_TS_CRI_ENDPOINT`): manifest
 *     written → every container running, p50/p99 over 20 pods, compared with the bare CRI call
 *     sequence (RunPodSandbox + CreateContainer + StartContainer) for the same pods; target ≤ 1.3.
 * (b) steady state on the simulated runtime with 110, 500 and 1000 static pods: CPU (cores) and
 *     RSS of the kubelet process (`main.ts` as a subprocess), sampled from /proc over ~10 s;
 *     targets at 110 pods: ≤ 0.05 cores, ≤ 120 MiB.
 *
 * Run: `deno run -A bench/pod_bench.ts [--quick]` (`--quick`: 110 pods only, 5 s sample).
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { systemClock } from "../src/clock/mod.ts";
import { createKubelet } from "../src/kubelet/create_kubelet.ts";
import { createLogger } from "../src/log/mod.ts";
import {
  createPodSyncer,
  generateContainerConfig,
  generatePodSandboxConfig,
} from "../src/pod/mod.ts";
import type { Pod } from "../src/pod/types.ts";
import {
  ContainerState,
  createCriRuntime,
  type CriRuntime,
} from "../src/runtime/mod.ts";
import { createPodStatusManager } from "../src/status/mod.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const QUICK = Deno.args.includes("--quick");
const CLK_TCK = 100;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(
    sorted.length - 1,
    Math.ceil((p / 100) * sorted.length) - 1,
  );
  return sorted[Math.max(0, index)]!;
}

async function until(
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function isRunning(
  runtime: CriRuntime,
  podName: string,
): Promise<boolean> {
  const { containers } = await runtime.listContainers({
    filter: { labelSelector: { "io.kubernetes.pod.name": podName } },
  });
  return containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING);
}

async function sweep(runtime: CriRuntime, suffix: string): Promise<void> {
  const { items } = await runtime.listPodSandbox({});
  for (const s of items.filter((s) => s.metadata?.name.endsWith(suffix))) {
    await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
    await runtime.removePodSandbox({ podSandboxId: s.id }).catch(() => {});
  }
}

/** (a): kubelet path vs. the bare CRI calls, same pods, one at a time. */
async function startLatencyBench(
  endpoint: string,
  options: { pods: number },
): Promise<void> {
  const image = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
    "kts.local/busybox:latest";
  const node = `bench-${crypto.randomUUID().slice(0, 6)}`;
  const dir = await Deno.makeTempDir({ prefix: "kts-pod-bench-a-" });
  await Deno.mkdir(`${dir}/manifests`);
  const runtime = createCriRuntime({ endpoint, timeoutMs: 60_000 });
  const logger = createLogger({ stderr: () => {} });
  const syncer = createPodSyncer({
    runtime,
    images: runtime,
    clock: systemClock,
    logger,
    statusManager: createPodStatusManager(),
  }, { podLogsDir: `${dir}/logs`, serializeImagePulls: true, nodeName: node });
  const kubelet = createKubelet(
    { runtime, syncer, clock: systemClock, logger },
    {
      nodeName: node,
      staticPodPath: `${dir}/manifests`,
    },
  );
  const kubeletMs: number[] = [];
  const bareMs: number[] = [];
  try {
    kubelet.start();
    for (let i = 0; i < options.pods; i++) {
      const t0 = performance.now();
      await Deno.writeTextFile(
        `${dir}/manifests/lat-${i}.yaml`,
        manifest(i, { name: `lat-${i}`, image }),
      );
      await until(() => isRunning(runtime, `lat-${i}-${node}`));
      kubeletMs.push(performance.now() - t0);
    }
    for (let i = 0; i < options.pods; i++) {
      // The same pod as the kubelet's, and the kubelet's own CRI configs for it, so the ratio
      // measures what the kubelet adds, not a cheaper sandbox (upstream forces the runtime's
      // default seccomp profile on every sandbox, for one).
      const name = `bare-${i}-${node}`;
      const pod: Pod = {
        metadata: { name, namespace: "default", uid: crypto.randomUUID() },
        spec: {
          containers: [{
            name: "app",
            image,
            imagePullPolicy: "IfNotPresent",
            command: ["sleep", "3600"],
          }],
        },
      };
      const sandboxConfig = generatePodSandboxConfig(pod, {
        podLogsDir: `${dir}/logs`,
        attempt: 0,
      });
      const containerConfig = generateContainerConfig(
        pod,
        pod.spec.containers[0]!,
        {
          nodeName: node,
          restartCount: 0,
          imageRef: image,
        },
      );
      await Deno.mkdir(`${sandboxConfig.logDirectory}/app`, {
        recursive: true,
      });
      const t0 = performance.now();
      const { podSandboxId } = await runtime.runPodSandbox({
        config: sandboxConfig,
      });
      const { containerId } = await runtime.createContainer({
        podSandboxId,
        sandboxConfig,
        config: containerConfig,
      });
      await runtime.startContainer({ containerId });
      bareMs.push(performance.now() - t0);
    }
    const fmt = (v: number) => `${v.toFixed(0)} ms`;
    const ratio = percentile(kubeletMs, 50) / percentile(bareMs, 50);
    console.log(
      `(a) start latency over ${options.pods} pods: kubelet p50 ${
        fmt(percentile(kubeletMs, 50))
      } ` +
        `p99 ${fmt(percentile(kubeletMs, 99))}; bare CRI p50 ${
          fmt(percentile(bareMs, 50))
        } ` +
        `p99 ${fmt(percentile(bareMs, 99))}; ratio p50 ${
          ratio.toFixed(2)
        } (target ≤ 1.3: ${ratio <= 1.3 ? "OK" : "MISSED"})`,
    );
  } finally {
    await kubelet.stop();
    await sweep(runtime, `-${node}`);
    await runtime.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

function manifest(
  i: number,
  opts: { name?: string; image?: string } = {},
): string {
  return [
    "apiVersion: v1",
    "kind: Pod",
    "metadata:",
    `  name: ${opts.name ?? `bench-${i}`}`,
    "spec:",
    "  containers:",
    "  - name: app",
    `    image: ${opts.image ?? "kts.local/busybox:latest"}`,
    "    imagePullPolicy: IfNotPresent",
    '    command: ["sleep", "3600"]',
    "",
  ].join("\n");
}

async function readProc(
  pid: number,
): Promise<{ ticks: number; rssKiB: number }> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state); utime/stime are fields 14/15.
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const rss = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return { ticks, rssKiB: Number(rss ?? 0) };
}

async function steadyState(pods: number): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kts-pod-bench-" });
  try {
    await Deno.mkdir(`${dir}/manifests`);
    for (let i = 0; i < pods; i++) {
      await Deno.writeTextFile(`${dir}/manifests/bench-${i}.yaml`, manifest(i));
    }
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      [
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "kind: KubeletConfiguration",
        `staticPodPath: ${dir}/manifests`,
        "containerRuntimeEndpoint: sim://default",
        `podLogsDir: ${dir}/logs`,
        "",
      ].join("\n"),
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}main.ts`,
        "--config",
        `${dir}/config.yaml`,
        "--hostname-override",
        "bench-node",
      ],
      stdout: "null",
      stderr: "piped",
      cwd: ROOT,
    }).spawn();
    // Count "Pod status ... Running" lines to know when every pod runs.
    const running = new Set<string>();
    let allRunning: () => void = () => {};
    const started = new Promise<void>((r) => (allRunning = r));
    const reader = (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of child.stderr) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          const m = /"Pod status" pod="([^"]+)" phase="Running"/.exec(line);
          if (m) running.add(m[1]!);
          if (running.size >= pods) allRunning();
        }
      }
    })();
    const t0 = performance.now();
    const timeout = new Promise<"timeout">((r) =>
      setTimeout(() => r("timeout"), 60_000 + pods * 60)
    );
    const outcome = await Promise.race([
      started.then(() => "ok" as const),
      timeout,
    ]);
    const warmupMs = performance.now() - t0;
    if (outcome === "timeout") {
      console.log(
        `(b) ${pods} pods: only ${running.size} reported Running before the timeout`,
      );
    }
    await new Promise((r) => setTimeout(r, 2000)); // settle
    const sampleMs = QUICK ? 5000 : 10_000;
    const a = await readProc(child.pid);
    const s0 = performance.now();
    let peakRss = a.rssKiB;
    while (performance.now() - s0 < sampleMs) {
      await new Promise((r) => setTimeout(r, 500));
      peakRss = Math.max(peakRss, (await readProc(child.pid)).rssKiB);
    }
    const b = await readProc(child.pid);
    const seconds = (performance.now() - s0) / 1000;
    const cores = (b.ticks - a.ticks) / CLK_TCK / seconds;
    const rssMiB = peakRss / 1024;
    child.kill("SIGINT");
    await child.status;
    await reader.catch(() => {});
    const targets = pods === 110
      ? ` (targets ≤ 0.05 cores: ${
        cores <= 0.05 ? "OK" : "MISSED"
      }, ≤ 120 MiB: ${rssMiB <= 120 ? "OK" : "MISSED"})`
      : "";
    console.log(
      `(b) ${pods} pods on sim: all running after ${
        (warmupMs / 1000).toFixed(1)
      } s; ` +
        `steady CPU ${cores.toFixed(3)} cores, RSS ${
          rssMiB.toFixed(1)
        } MiB${targets}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

console.log("pod_bench: pod start latency and steady-state cost");
const endpoint = Deno.env.get("KUBELET_TS_CRI_ENDPOINT");
if (!endpoint) {
  console.log(
    "(a) skipped: set KUBELET_TS_CRI_ENDPOINT (scripts/cri_env.sh up) to measure on containerd",
  );
} else {
  await startLatencyBench(endpoint, { pods: QUICK ? 5 : 20 });
}
for (const pods of QUICK ? [110] : [110, 500, 1000]) {
  await steadyState(pods);
}
