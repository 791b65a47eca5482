/**
 * The kubelet API against the local control plane (scripts/cluster_env.sh) with x509 and
 * Webhook authentication and Webhook authorization, attacked over real TLS by the Go peer:
 * bearer tokens that name nobody (none, made up, of a deleted service account, bound to a
 * deleted Secret) are a 401, and an identity RBAC grants nothing gets upstream's 403 body on
 * every route. Path tricks are covered by tests/server/api_security_test.ts (every route and
 * trick against the handler) and tests/server/api_tls_test.ts (raw bytes over TLS). Skips
 * when the control plane is not there.
 */
import assert from "node:assert/strict";
import { makeCertificate } from "../../src/server/testing.ts";
import { cluster, clusterMissing, kubectl } from "../cluster/_cluster.ts";
import { startApi } from "../server/_helpers.ts";
import { peerGet, tlsPeer } from "./_tls_peer.ts";

const CLUSTER_ROOT = Deno.env.get("KUBELET_TS_CLUSTER_ROOT") ?? "";
const missing = clusterMissing ??
  (CLUSTER_ROOT ? undefined : "KUBELET_TS_CLUSTER_ROOT is not set");

/** Every served route, with the verb and subresource upstream asks the authorizer for. */
const ROUTES: ReadonlyArray<readonly [string, string, string]> = [
  ["/pods", "get", "proxy"],
  ["/runningpods/", "get", "proxy"],
  ["/healthz", "get", "proxy"],
  ["/configz", "get", "proxy"],
  ["/metrics", "get", "metrics"],
  ["/metrics/resource", "get", "metrics"],
  ["/metrics/probes", "get", "metrics"],
  ["/stats/summary", "get", "stats"],
  ["/containerLogs/default/web/app", "get", "proxy"],
  ["/logs/", "get", "log"],
  ["/exec/default/web/app?command=id", "create", "proxy"],
  ["/attach/default/web/app", "create", "proxy"],
  ["/portForward/default/web", "create", "proxy"],
  ["/run/default/web/app", "create", "proxy"],
];

const NS = "kts-sec-attacks";

Deno.test({
  name:
    "tokens that name nobody get 401 and an identity without RBAC gets upstream's 403 on every route",
  ignore: missing !== undefined,
  async fn() {
    const peer = await tlsPeer();
    const dir = await Deno.makeTempDir({ prefix: "kts-sec-cluster-" });
    await kubectl("create", "namespace", NS).catch(() => {});
    try {
      await using api = await startApi({
        certDir: `${dir}/pki`,
        clientCAFile: cluster.ca,
        kubeconfig: cluster.kubeconfig,
        authorizationMode: "Webhook",
        webhookAuthn: { enabled: true, cacheTtlMs: 120_000 },
        webhookAuthz: { allowedTtlMs: 300_000, deniedTtlMs: 0 },
      });
      const ca = {
        certPem: await Deno.readTextFile(cluster.ca),
        keyPem: await Deno.readTextFile(`${CLUSTER_ROOT}/pki/ca.key`),
      };
      const nobody = makeCertificate({
        commonName: "kts-sec-nobody",
        issuer: ca,
      });
      const presented = { chainPem: nobody.certPem, keyPem: nobody.keyPem };
      for (const [path, verb, subresource] of ROUTES) {
        const r = await peerGet(peer, `${api.url}${path}`, { dir, presented });
        assert.deepEqual(r, {
          outcome: 403,
          body:
            `Forbidden (user=kts-sec-nobody, verb=${verb}, resource=nodes, subresource=${subresource})\n`,
        }, path);
      }

      const unauthorized = { outcome: 401, body: "Unauthorized\n" };
      const pods = `${api.url}/pods`;
      assert.deepEqual(
        await peerGet(peer, pods, { dir }),
        unauthorized,
        "none",
      );
      assert.deepEqual(
        await peerGet(peer, pods, { dir, token: "not-a-token" }),
        unauthorized,
        "made up",
      );
      // A service account token is someone (403) until its account is deleted; each token
      // is asked about once, so no cached review answers for it.
      await kubectl("create", "serviceaccount", "-n", NS, "gone");
      await kubectl("create", "serviceaccount", "-n", NS, "kept");
      const live = (await kubectl("create", "token", "-n", NS, "kept")).trim();
      const orphan = (await kubectl("create", "token", "-n", NS, "gone"))
        .trim();
      await kubectl("create", "secret", "generic", "-n", NS, "anchor");
      const bound = (await kubectl(
        "create",
        "token",
        "-n",
        NS,
        "kept",
        "--bound-object-kind",
        "Secret",
        "--bound-object-name",
        "anchor",
      )).trim();
      const liveAnswer = await peerGet(peer, pods, { dir, token: live });
      assert.equal(liveAnswer.outcome, 403, liveAnswer.body);
      assert.match(
        liveAnswer.body,
        new RegExp(`user=system:serviceaccount:${NS}:kept`),
      );
      await kubectl("delete", "serviceaccount", "-n", NS, "gone", "--wait");
      await kubectl("delete", "secret", "-n", NS, "anchor", "--wait");
      assert.deepEqual(
        await peerGet(peer, pods, { dir, token: orphan }),
        unauthorized,
        "deleted service account",
      );
      assert.deepEqual(
        await peerGet(peer, pods, { dir, token: bound }),
        unauthorized,
        "bound to a deleted Secret",
      );
    } finally {
      await kubectl("delete", "namespace", NS, "--wait=false").catch(() => {});
      await Deno.remove(dir, { recursive: true });
    }
  },
});
