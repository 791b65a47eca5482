/**
 * The control-plane half of a joined differential side: a namespace named after the side's
 * Node for its API pods, kubectl with the admin kubeconfig, and the clean-up of everything
 * the side left in the cluster (namespace, mirror pods, events, Node, Lease).
 */
import {
  type ControlPlane,
  deleteNode,
  kubectlOn,
  waitFor,
} from "../cluster/_cluster.ts";
import type { ApiContext } from "./scenarios.ts";

/** A joined side's namespace and kubectl; the scenario's context adds `record`. */
export interface ApiSide extends Omit<ApiContext, "record">, AsyncDisposable {}

interface EventList {
  items: { metadata: { name: string }; involvedObject: { name?: string } }[];
}

/** Creates the namespace `node` and waits for its default service account. */
export async function startApiSide(
  node: string,
  plane: ControlPlane,
  scratch: string,
): Promise<ApiSide> {
  const { kubectl, getJson } = kubectlOn(plane);
  await kubectl("create", "namespace", node);
  // the ServiceAccount admission plugin rejects pods until the controller made it
  await waitFor(
    "the namespace's default service account",
    () => getJson("serviceaccount", "default", "-n", node),
    30_000,
  );
  let created = 0;
  return {
    namespace: node,
    kubectl,
    getJson,
    async create(object) {
      const file = `${scratch}/${node}-${created++}.json`;
      await Deno.writeTextFile(file, JSON.stringify(object));
      await kubectl("create", "-n", node, "-f", file);
    },
    async [Symbol.asyncDispose]() {
      await kubectl("delete", "namespace", node, "--wait=false").catch(
        () => {},
      );
      // mirror pods, and API pods a stopped kubelet never finished
      await kubectl(
        "delete",
        "pods",
        "-A",
        "--field-selector",
        `spec.nodeName=${node}`,
        "--force",
        "--grace-period=0",
      ).catch(() => {});
      const events = await getJson<EventList>("events", "-n", "default")
        .catch(() => undefined);
      const mine = (events?.items ?? []).filter((e) =>
        e.involvedObject.name?.includes(node)
      ).map((e) => e.metadata.name);
      if (mine.length > 0) {
        await kubectl("delete", "events", "-n", "default", ...mine).catch(
          () => {},
        );
      }
      await deleteNode(node, { kubectl, getJson });
    },
  };
}
