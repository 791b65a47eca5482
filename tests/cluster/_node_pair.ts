/**
 * What the differentials that run the upstream kubelet and kubelet.ts side by side (each a
 * node joined to the shared control plane) have in common: their prerequisites, starting and
 * stopping the pair, and the kubelet logs a failed run keeps.
 */
import {
  type KubeletKind,
  type Node,
  type NodeSpec,
  startNode,
} from "../conformance/node.ts";
import {
  cluster,
  clusterMissing,
  deleteNode,
  kubectl,
  run,
} from "./_cluster.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Why two nodes cannot be started here (root, the control plane, the peers), if they cannot. */
export async function nodePairMissing(
  rootNeed = "containerd and the kubelets",
): Promise<string | undefined> {
  if (clusterMissing) return clusterMissing;
  if (Deno.uid() !== 0) return `needs root (${rootNeed})`;
  if (!cluster.ca) {
    return "KUBELET_TS_CLUSTER_CA is not set (scripts/cluster_env.sh env)";
  }
  const r = await run("bash", [`${ROOT}/scripts/peers.sh`, "dir"]);
  return r.code === 0
    ? undefined
    : "the upstream kubelet is not built: run bash scripts/peers.sh build";
}

/** A failed run's kubelet logs outlive the nodes' roots, for the reader of the failure. */
export async function keepLogs(nodes: Node[]): Promise<void> {
  for (const n of nodes) {
    const kept = `/tmp/${n.name}.failed.log`;
    await Deno.copyFile(n.log, kept).catch(() => {});
    // deno-lint-ignore no-console
    console.warn(`${n.name}: kubelet log kept in ${kept}`);
  }
}

/** Applies one object through a file, as an operator's `kubectl apply -f` would. */
export async function applyObject(object: unknown): Promise<void> {
  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(file, JSON.stringify(object));
    await kubectl("apply", "-f", file);
  } finally {
    await Deno.remove(file);
  }
}

/** The upstream kubelet first, then kubelet.ts: the order of every pair's results. */
export const PAIR_KINDS: readonly KubeletKind[] = ["upstream", "ours"];

/**
 * Starts both kubelets (each with `options(kind)`), runs `scenario` on both at once and
 * hands back their outcomes; a failure keeps the kubelet logs. The nodes are stopped, their
 * Node objects deleted and `cleanup` run whatever happened.
 */
export async function withNodePair<T>(
  nodes: {
    specs: Record<KubeletKind, NodeSpec>;
    roots: Record<KubeletKind, string>;
    options?: (
      kind: KubeletKind,
    ) => NonNullable<Parameters<typeof startNode>[4]>;
    /** Called when a node has started (before the scenario). */
    started?: (kind: KubeletKind) => void;
  },
  scenario: (kind: KubeletKind, node: Node) => Promise<T>,
  cleanup: () => Promise<void> = () => Promise.resolve(),
): Promise<Record<KubeletKind, T>> {
  const join = {
    bootstrapKubeconfig: cluster.bootstrapKubeconfig,
    ca: cluster.ca,
  };
  const started = await Promise.allSettled(
    PAIR_KINDS.map(async (kind) => {
      const node = await startNode(
        kind,
        nodes.roots[kind],
        join,
        nodes.specs[kind],
        nodes.options?.(kind) ?? {},
      );
      nodes.started?.(kind);
      return node;
    }),
  );
  const up = started.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
  let ok = false;
  try {
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const [upstream, ours] = await Promise.all(
      PAIR_KINDS.map((kind, i) => scenario(kind, up[i]!)),
    );
    ok = true;
    return { upstream: upstream!, ours: ours! };
  } finally {
    if (!ok) await keepLogs(up);
    // the teardown unmounts whatever a node mounted under its root
    for (const n of up) await n[Symbol.asyncDispose]();
    for (const kind of PAIR_KINDS) {
      await deleteNode(nodes.specs[kind].node).catch(() => {});
    }
    await cleanup();
  }
}
