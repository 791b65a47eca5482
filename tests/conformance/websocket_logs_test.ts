/**
 * NodeConformance "Pods should support retrieving logs from the container over websockets"
 * reproduced against the local control plane (scripts/cluster_env.sh) with kubelet.ts as the
 * node (tests/conformance/node.ts: its own containerd, node IP 10.125.0.1 on its own CNI
 * bridge, so the API server dials its kubelet API): the API server's `pods/log` over a
 * websocket carries the container's line in both log protocols. The API server used to send
 * nothing: it drops bytes that arrive together with the end of the kubelet's body, and
 * kubelet.ts sent both in one write. Needs root (bridge, containerd); skips otherwise.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  cluster,
  clusterMissing,
  deleteNode,
  kubectl,
} from "../cluster/_cluster.ts";
import { openStream, websocketHeaders } from "../server/_stream_client.ts";
import { type NodeSpec, startNode } from "./node.ts";
import { removeTree } from "../_mounts.ts";

const SPEC: NodeSpec = {
  node: "h3-wslogs",
  bridge: "h3wslogs",
  subnet: "10.125.0.0/16",
  ip: "10.125.0.1",
  port: 10950,
  healthz: 10948,
};

const skip = clusterMissing ??
  (Deno.uid() !== 0
    ? "needs root (a CNI bridge and containerd, as scripts/cri_env.sh)"
    : undefined);

interface KubeconfigUser {
  users: Array<{
    user: {
      "client-certificate-data": string;
      "client-key-data": string;
    };
  }>;
}

Deno.test({
  name:
    "the API server's pods/log over a websocket carries the log of a container on a kubelet.ts node",
  ignore: skip !== undefined,
  async fn() {
    const admin = parse(
      await Deno.readTextFile(cluster.kubeconfig),
    ) as KubeconfigUser;
    const user = admin.users[0]!.user;
    const target = {
      port: Number(new URL(Deno.env.get("KUBELET_TS_APISERVER")!).port),
      caPem: await Deno.readTextFile(cluster.ca),
      cert: {
        certPem: atob(user["client-certificate-data"]),
        keyPem: atob(user["client-key-data"]),
      },
    };
    const ns = `h3-wslogs-${crypto.randomUUID().slice(0, 6)}`;
    const root = await Deno.makeTempDir({ prefix: "kts-h3-wslogs-" });
    try {
      await readLogsOnNode(root);
    } finally {
      await removeTree(root);
    }

    async function readLogsOnNode(root: string) {
      await using _node = await startNode("ours", root, {
        bootstrapKubeconfig: cluster.bootstrapKubeconfig,
        ca: cluster.ca,
      }, SPEC);
      try {
        await kubectl("create", "namespace", ns);
        const pod = {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "logs", namespace: ns },
          spec: {
            nodeName: SPEC.node,
            tolerations: [{ operator: "Exists" }],
            terminationGracePeriodSeconds: 0,
            containers: [{
              name: "main",
              image: "kts.local/busybox:latest",
              imagePullPolicy: "IfNotPresent",
              command: ["sh", "-c", "echo container is alive; sleep 10000"],
            }],
          },
        };
        await Deno.writeTextFile(`${root}/pod.json`, JSON.stringify(pod));
        await kubectl("apply", "-f", `${root}/pod.json`);
        await kubectl(
          "-n",
          ns,
          "wait",
          "--for=jsonpath={.status.phase}=Running",
          "pod/logs",
          "--timeout=60s",
        );
        const path = `/api/v1/namespaces/${ns}/pods/logs/log?container=main`;
        const read = async (protocol: string) => {
          const session = await openStream(
            target,
            "GET",
            path,
            websocketHeaders([protocol]),
          );
          assert.equal(session.status, 101, session.body);
          await session.closed;
          const text = session.messages().map((m) =>
            new TextDecoder().decode(m)
          );
          return protocol.startsWith("base64")
            ? text.map((t) => atob(t)).join("")
            : text.join("");
        };
        // As the conformance test: right after Running, one read of the whole stream.
        assert.equal(await read("binary.k8s.io"), "container is alive\n");
        assert.equal(
          await read("base64.binary.k8s.io"),
          "container is alive\n",
        );
        for (let i = 0; i < 10; i++) {
          assert.equal(await read("binary.k8s.io"), "container is alive\n");
        }
      } finally {
        await kubectl("delete", "namespace", ns, "--wait=false").catch(
          () => {},
        );
        await deleteNode(SPEC.node);
      }
    }
  },
});
