/**
 * What each kubelet of a multi-node cluster (scripts/cluster_nodes.sh) costs while a suite
 * runs on it: CPU (cores) and RSS of each kubelet process sampled from /proc, and the pods
 * each kubelet started (its `kubelet_started_pods_total`, read through the API server's node
 * proxy at the start and at the end), so pods/s cluster-wide. Both kubelets export that
 * counter, so an all-upstream, an all-kubelet.ts and a mixed cluster compare on the same terms.
 *
 *   deno run -A bench/cluster_usage.ts --out <file.json> --kubeconfig <file> --kubectl <bin>
 *     --node <name>:<kind>:<kubelet pid file> [--node …] [--interval <s>]
 *
 * Samples until SIGTERM or SIGINT, then writes the summary (per node and per kind, with the
 * machine's load average over the run) to --out. scripts/cluster_nodes_e2e.sh runs it around
 * its suites.
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { usage } from "./_peers.ts";

interface NodeArg {
  name: string;
  kind: string;
  pidFile: string;
}

interface NodeTrack extends NodeArg {
  pid: number;
  startCpu: number;
  lastCpu: number;
  rss: number[];
  startedBefore: number | undefined;
}

function parseArgs(args: string[]): {
  out: string;
  kubeconfig: string;
  kubectl: string;
  interval: number;
  nodes: NodeArg[];
} {
  const nodes: NodeArg[] = [];
  let out = "", kubeconfig = "", kubectl = "kubectl", interval = 10;
  for (let i = 0; i < args.length; i++) {
    const value = args[i + 1] ?? "";
    switch (args[i]) {
      case "--out":
        out = value;
        break;
      case "--kubeconfig":
        kubeconfig = value;
        break;
      case "--kubectl":
        kubectl = value;
        break;
      case "--interval":
        interval = Number(value);
        break;
      case "--node": {
        const [name, kind, ...rest] = value.split(":");
        if (!name || !kind || rest.length === 0) {
          throw new Error(
            `--node ${value}: want <name>:<kind>:<kubelet pid file>`,
          );
        }
        nodes.push({ name, kind, pidFile: rest.join(":") });
        break;
      }
      default:
        throw new Error(`unknown argument ${args[i]}`);
    }
    i++;
  }
  if (!out || !kubeconfig || nodes.length === 0 || !(interval > 0)) {
    throw new Error(
      "usage: cluster_usage.ts --out <file> --kubeconfig <file> --kubectl <bin> --node <name>:<kind>:<pid file> …",
    );
  }
  return { out, kubeconfig, kubectl, interval, nodes };
}

/** The value of an unlabelled counter in a Prometheus text exposition. */
function counterValue(
  text: string,
  name: string,
): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(name + " ") || line.startsWith(name + "{}")) {
      const value = Number(line.slice(line.lastIndexOf(" ") + 1));
      if (Number.isFinite(value)) return value;
    }
  }
  return undefined;
}

async function startedPods(
  kubectl: string,
  kubeconfig: string,
  node: string,
): Promise<number | undefined> {
  const out = await new Deno.Command(kubectl, {
    args: [
      `--kubeconfig=${kubeconfig}`,
      "get",
      "--raw",
      `/api/v1/nodes/${node}/proxy/metrics`,
    ],
    stderr: "null",
  }).output();
  if (out.code !== 0) return undefined;
  return counterValue(
    new TextDecoder().decode(out.stdout),
    "kubelet_started_pods_total",
  );
}

function loadAverage(): number {
  return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
}

const mean = (values: number[]): number =>
  values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;

async function main(): Promise<void> {
  const { out, kubeconfig, kubectl, interval, nodes } = parseArgs(Deno.args);
  const tracks: NodeTrack[] = [];
  for (const node of nodes) {
    const pid = Number((await Deno.readTextFile(node.pidFile)).trim());
    const first = await usage(pid);
    tracks.push({
      ...node,
      pid,
      startCpu: first.cpu,
      lastCpu: first.cpu,
      rss: [first.rssMiB],
      startedBefore: await startedPods(kubectl, kubeconfig, node.name),
    });
  }
  const t0 = performance.now();
  const loads = [loadAverage()];
  let stopping = false;
  const stop = () => stopping = true;
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  while (!stopping) {
    for (let waited = 0; waited < interval * 1000 && !stopping; waited += 250) {
      await new Promise((r) => setTimeout(r, 250));
    }
    loads.push(loadAverage());
    for (const track of tracks) {
      try {
        const now = await usage(track.pid);
        track.lastCpu = now.cpu;
        track.rss.push(now.rssMiB);
      } catch {
        // the kubelet exited: its figures end at the last sample
      }
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const perNode = await Promise.all(tracks.map(async (track) => {
    const after = await startedPods(kubectl, kubeconfig, track.name);
    return {
      name: track.name,
      kind: track.kind,
      cpuCores: (track.lastCpu - track.startCpu) / seconds,
      rssMeanMiB: mean(track.rss),
      rssMaxMiB: Math.max(...track.rss),
      podsStarted: after !== undefined && track.startedBefore !== undefined
        ? after - track.startedBefore
        : undefined,
    };
  }));
  const kinds = [...new Set(perNode.map((n) => n.kind))].map((kind) => {
    const of = perNode.filter((n) => n.kind === kind);
    return {
      kind,
      nodes: of.length,
      cpuCoresPerNode: mean(of.map((n) => n.cpuCores)),
      rssMeanMiBPerNode: mean(of.map((n) => n.rssMeanMiB)),
      rssMaxMiB: Math.max(...of.map((n) => n.rssMaxMiB)),
      podsStarted: of.reduce((a, n) => a + (n.podsStarted ?? 0), 0),
    };
  });
  const podsStarted = perNode.reduce((a, n) => a + (n.podsStarted ?? 0), 0);
  const summary = {
    seconds,
    samples: loads.length,
    load: { mean: mean(loads), max: Math.max(...loads) },
    podsStarted,
    podsPerSecond: podsStarted / seconds,
    kinds,
    nodes: perNode,
  };
  await Deno.writeTextFile(out, JSON.stringify(summary, null, 2) + "\n");
  console.log(JSON.stringify(summary));
}

if (import.meta.main) {
  try {
    await main();
  } catch (e) {
    console.error(`cluster_usage: ${e instanceof Error ? e.message : e}`);
    Deno.exit(1);
  }
}
