/**
 * Proves the local control plane before kubelet.ts joins it: the API server answers, and the
 * upstream kubelet (our reference) joins through TLS bootstrap, gets its client certificate,
 * turns Ready and runs a pod the scheduler binds to it.
 */
import assert from "node:assert/strict";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  getJson,
  kubectl,
  REGISTRY_IMAGE,
  script,
  waitFor,
} from "./_cluster.ts";

const NODE = "kts-upstream-env";

Deno.test({
  name: "cluster env: kube-apiserver is ready and serves v1.34",
  ignore: clusterMissing !== undefined,
  async fn() {
    assert.equal(await kubectl("get", "--raw", "/readyz"), "ok");
    const version = JSON.parse(await kubectl("get", "--raw", "/version"));
    assert.equal(version.major, "1");
    assert.equal(version.minor, "34");
    assert.match(version.gitVersion, /^v1\.34\.\d+$/);
  },
});

interface Csr {
  metadata: { name: string };
  spec: { username: string; signerName: string };
  status?: {
    certificate?: string;
    conditions?: { type: string; status: string }[];
  };
}

Deno.test({
  name:
    "cluster env: the upstream kubelet bootstraps, its Node turns Ready and runs a scheduled pod",
  ignore: clusterMissing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const root = await Deno.makeTempDir({ prefix: "kts-upstream-env-" });
    const env = {
      KTS_UPSTREAM_ROOT: root,
      KTS_UPSTREAM_NODE: NODE,
      KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG: cluster.bootstrapKubeconfig,
      KUBELET_TS_CLUSTER_CA: cluster.ca,
    };
    try {
      const up = await script("upstream_kubelet.sh", ["up"], env);
      assert.equal(up.KUBELET_TS_UPSTREAM_NODE, NODE);

      // TLS bootstrap: the kubelet's client CSR, made with the bootstrap token, is approved
      // by the controller manager and signed.
      const csr = await waitFor(
        "the kubelet's client CSR to be issued",
        async () => {
          const list = await getJson<{ items: Csr[] }>("csr");
          return list?.items.find((c) =>
            c.spec.signerName ===
              "kubernetes.io/kube-apiserver-client-kubelet" &&
            c.spec.username === "system:bootstrap:ktsboo" &&
            conditionTrue(c, "Approved") && c.status?.certificate
          );
        },
      );
      assert.ok(csr.status?.certificate);

      const node = await waitFor("Node to turn Ready", async () => {
        const n = await getJson<{
          status: {
            nodeInfo: { kubeletVersion: string };
            conditions: { type: string; status: string }[];
          };
        }>("node", NODE);
        return n && conditionTrue(n, "Ready") ? n : undefined;
      });
      assert.match(node.status.nodeInfo.kubeletVersion, /^v1\.34\.\d+$/);

      const pod = `env-check-${Date.now().toString(36)}`;
      await kubectl(
        "run",
        pod,
        `--image=${REGISTRY_IMAGE}`,
        "--restart=Never",
        `--overrides={"apiVersion":"v1","spec":{"nodeSelector":{"kubernetes.io/hostname":"${NODE}"}}}`,
        "--command",
        "--",
        "sleep",
        "3600",
      );
      const running = await waitFor("the pod to run", async () => {
        const p = await getJson<{
          spec: { nodeName?: string };
          status: { phase: string; podIP?: string };
        }>("pod", pod);
        return p?.status.phase === "Running" ? p : undefined;
      });
      assert.equal(running.spec.nodeName, NODE);
      assert.ok(running.status.podIP, "a Running pod has an IP");
      await kubectl("delete", "pod", pod, "--wait=false");
    } finally {
      await script("upstream_kubelet.sh", ["down"], env).catch(() => {});
      await kubectl("delete", "node", NODE, "--ignore-not-found").catch(
        () => {},
      );
      await Deno.remove(root, { recursive: true }).catch(() => {});
    }
  },
});
