/**
 * Extended resources, on real containerd and the local control plane with an in-process
 * kubelet.ts (`startApiKubelet`): `example.com/foo` patched into the Node's status capacity
 * stays there and becomes allocatable; a pod asking for it fits, and a second one that no
 * longer fits is rejected with upstream's `OutOfexample.com/foo` reason and message.
 *
 * Node and namespace are `h8-ext-<random>`, removed at the end with everything created.
 */
import assert from "node:assert/strict";
import {
  apiKubeletMissing as missing,
  createObject,
  pinnedPod,
  startApiKubelet,
} from "./_api_kubelet.ts";
import { CRI_ENDPOINT, getJson, kubectl, waitFor } from "./_cluster.ts";

// deno-lint-ignore no-console
if (missing) console.log(`skipping extended_resources_test: ${missing}`);

const FOO = "example.com/foo";

interface NodeJson {
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
  };
}
interface PodJson {
  status?: { phase?: string; reason?: string; message?: string };
}

function createPod(ns: string, name: string): Promise<void> {
  return createObject(
    pinnedPod(name, ns, ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"], {
      resources: { requests: { [FOO]: "1" }, limits: { [FOO]: "1" } },
    }),
  );
}

Deno.test({
  name:
    "an extended resource patched into node capacity is kept and allocatable; a pod beyond it is rejected OutOfexample.com/foo",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const k = await startApiKubelet("h8-ext", { criEndpoint: CRI_ENDPOINT });
    const ns = k.node;
    try {
      await kubectl(
        "patch",
        "node",
        ns,
        "--subresource=status",
        "--type=json",
        "-p",
        JSON.stringify([{
          op: "add",
          path: "/status/capacity/example.com~1foo",
          value: "1",
        }]),
      );
      // The kubelet's next status rounds keep it in capacity and mirror it to allocatable.
      await waitFor("example.com/foo allocatable", async () => {
        const n = await getJson<NodeJson>("node", ns);
        return n?.status?.allocatable?.[FOO] === "1" ? true : undefined;
      }, 30_000);
      await new Promise((r) => setTimeout(r, 2_500)); // two more status rounds
      const node = await getJson<NodeJson>("node", ns);
      assert.equal(node?.status?.capacity?.[FOO], "1");
      assert.equal(node?.status?.allocatable?.[FOO], "1");

      await createPod(ns, "fits");
      await waitFor("pod fits Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "fits");
        return p?.status?.phase === "Running" ? true : undefined;
      }, 60_000);
      await createPod(ns, "too-many");
      const rejected = await waitFor("pod too-many Failed", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "too-many");
        return p?.status?.phase === "Failed" ? p : undefined;
      }, 30_000);
      assert.equal(rejected.status?.reason, `OutOf${FOO}`);
      assert.equal(
        rejected.status?.message,
        `Pod was rejected: Node didn't have enough resource: ${FOO}, requested: 1, used: 1, capacity: 1`,
      );
    } finally {
      await k.stop();
    }
  },
});
