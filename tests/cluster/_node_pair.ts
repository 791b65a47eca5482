/**
 * What the differentials that run the upstream kubelet and kubelet.ts side by side (each a
 * node joined to the shared control plane) have in common: their prerequisites and the
 * kubelet logs a failed run keeps.
 */
import type { Node } from "../conformance/node.ts";
import { cluster, clusterMissing, run } from "./_cluster.ts";

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
