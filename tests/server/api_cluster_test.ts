/**
 * The kubelet API against the local control plane (scripts/cluster_env.sh): client
 * certificates verified against the cluster CA, bearer tokens through a real TokenReview and
 * every decision through a real SubjectAccessReview, with the admin kubeconfig as the
 * kubelet's credentials. Skips when the control plane is not there.
 */
import assert from "node:assert/strict";
import { makeCertificate } from "../../src/server/testing.ts";
import { cluster, clusterMissing, kubectl } from "../cluster/_cluster.ts";
import { get, startApi } from "./_helpers.ts";

const env = (name: string) => Deno.env.get(name) ?? "";
const CLUSTER_ROOT = env("KUBELET_TS_CLUSTER_ROOT");
const APISERVER_CLIENT = {
  cert: env("KUBELET_TS_APISERVER_KUBELET_CLIENT_CERT"),
  key: env("KUBELET_TS_APISERVER_KUBELET_CLIENT_KEY"),
};
const missing = clusterMissing ??
  (APISERVER_CLIENT.cert && CLUSTER_ROOT
    ? undefined
    : "no apiserver→kubelet client certificate in the environment");

/** A user that may `get nodes/proxy` on node-a and nothing else. */
const READER = "kts-api-test-reader";
const RBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${READER}}
rules:
- apiGroups: [""]
  resources: [nodes/proxy]
  resourceNames: [node-a]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${READER}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${READER}}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: ${READER}}
`;

async function clusterCa(): Promise<{ certPem: string; keyPem: string }> {
  return {
    certPem: await Deno.readTextFile(cluster.ca),
    keyPem: await Deno.readTextFile(`${CLUSTER_ROOT}/pki/ca.key`),
  };
}

Deno.test({
  name:
    "runApiServer() with Webhook authorization answers the apiserver 200, nobody 401 and users without the verb 403",
  ignore: missing !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "kts-api-cluster-" });
    const rbac = `${dir}/rbac.yaml`;
    await Deno.writeTextFile(rbac, RBAC);
    await kubectl("apply", "-f", rbac);
    try {
      await using api = await startApi({
        certDir: `${dir}/pki`,
        clientCAFile: cluster.ca,
        kubeconfig: cluster.kubeconfig,
        authorizationMode: "Webhook",
        webhookAuthn: { enabled: true, cacheTtlMs: 120_000 },
        // No caching of denials: the RBAC grant below must be seen at once.
        webhookAuthz: { allowedTtlMs: 300_000, deniedTtlMs: 0 },
      });
      const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
      const ca = await clusterCa();
      const apiserver = {
        certPem: await Deno.readTextFile(APISERVER_CLIENT.cert),
        keyPem: await Deno.readTextFile(APISERVER_CLIENT.key),
      };
      const nobody = makeCertificate({
        commonName: "kts-api-test-nobody",
        issuer: ca,
      });
      const reader = makeCertificate({ commonName: READER, issuer: ca });

      // The API server's own client certificate (O=system:masters) may do anything.
      for (const path of ["/pods", "/healthz", "/configz", "/runningpods/"]) {
        const r = await get(`${api.url}${path}`, { caPem, cert: apiserver });
        assert.equal(r.status, 200, `${path}: ${r.body}`);
      }
      assert.equal(
        (await get(`${api.url}/stats/summary`, { caPem, cert: apiserver }))
          .status,
        404,
        "authorized, not served yet",
      );
      // No credentials, anonymous off.
      assert.deepEqual(await get(`${api.url}/pods`, { caPem }), {
        status: 401,
        body: "Unauthorized\n",
      });
      // A cluster-CA certificate for a user RBAC grants nothing.
      assert.deepEqual(await get(`${api.url}/pods`, { caPem, cert: nobody }), {
        status: 403,
        body:
          "Forbidden (user=kts-api-test-nobody, verb=get, resource=nodes, subresource=proxy)\n",
      });
      // get nodes/proxy reads /pods but does not exec, even with a GET (WebSocket style).
      assert.equal(
        (await get(`${api.url}/pods`, { caPem, cert: reader })).status,
        200,
      );
      assert.deepEqual(
        await get(`${api.url}/exec/default/web/app?command=id`, {
          caPem,
          cert: reader,
        }),
        {
          status: 403,
          body:
            `Forbidden (user=${READER}, verb=create, resource=nodes, subresource=proxy)\n`,
        },
      );
      assert.equal(
        (await get(`${api.url}/stats/summary`, { caPem, cert: reader })).status,
        403,
        "nodes/proxy does not grant nodes/stats",
      );
      // Bearer tokens go through a real TokenReview: a service account token is a user the
      // API server knows (403 here), a made-up token is nobody (401).
      const token =
        (await kubectl("create", "token", "default", "-n", "default")).trim();
      const sa = await get(`${api.url}/pods`, { caPem, token });
      assert.equal(sa.status, 403, sa.body);
      assert.match(
        sa.body,
        /user=system:serviceaccount:default:default, verb=get/,
      );
      assert.equal(
        (await get(`${api.url}/pods`, { caPem, token: "not-a-token" })).status,
        401,
      );
    } finally {
      await kubectl("delete", "-f", rbac, "--ignore-not-found").catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "runApiServer() denies with 500 when the SubjectAccessReview cannot be made",
  ignore: missing !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "kts-api-cluster-" });
    try {
      // A kubeconfig whose API server does not answer.
      const kubeconfig = `${dir}/kubeconfig`;
      await Deno.writeTextFile(
        kubeconfig,
        [
          "apiVersion: v1",
          "kind: Config",
          "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]",
          "users: [{name: u, user: {token: x}}]",
          "contexts: [{name: x, context: {cluster: c, user: u}}]",
          "current-context: x",
          "",
        ].join("\n"),
      );
      await using api = await startApi({
        certDir: `${dir}/pki`,
        clientCAFile: cluster.ca,
        kubeconfig,
        authorizationMode: "Webhook",
      });
      const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
      const apiserver = {
        certPem: await Deno.readTextFile(APISERVER_CLIENT.cert),
        keyPem: await Deno.readTextFile(APISERVER_CLIENT.key),
      };
      const r = await get(`${api.url}/pods`, { caPem, cert: apiserver });
      assert.equal(r.status, 500);
      assert.match(
        r.body,
        /^Authorization error \(user=kube-apiserver-kubelet-client, verb=get/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
