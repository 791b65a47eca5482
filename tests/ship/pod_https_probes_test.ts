/**
 * HTTPS probes and hooks from the bundled kubelet under exactly its planned permission lists,
 * on a private runtime-only containerd (skipped without `KUBELET_TS_CRI_ENDPOINT`/
 * `KUBELET_TS_CRI_ROOT` from scripts/cri_env.sh, or without root).
 *
 * The test images have no TLS server, so the pod relays its port 8443 with busybox
 * `nc -ll -e nc` to an HTTPS server of this test on the bridge gateway, which presents a
 * self-signed certificate: to the kubelet it is a TLS server on the pod IP that no host
 * trusts. An HTTPS postStart hook and an HTTPS liveness probe reach it with no permission
 * beyond the podCIDR grant, and once the server answers 500 the container is restarted.
 */
import assert from "node:assert/strict";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { parseIpv4Cidr, rangeEnds } from "../../src/permissions/cidr.ts";
import { generateSelfSignedPair } from "../../src/server/tls/serving_cert.ts";
import {
  assertScopedPodNetworkGrants,
  collectStderr,
  finishBundled,
  freePort,
  podNetworkFields,
  spawnBundled,
  writeKubeletConfig,
} from "./_helpers.ts";
import {
  IMAGE,
  privateCri,
  privateCriMissing,
  waitFor,
} from "../pod/_containerd_e2e.ts";

/** The bridge gateway of a /16 (the CNI bridge plugin takes the first address). */
function gatewayOf(subnet: string): string {
  const [network] = rangeEnds(parseIpv4Cidr(subnet)!);
  return network.replace(/\.0$/, ".1");
}

Deno.test({
  name:
    "containerd, bundled with planned permissions: HTTPS postStart hook and liveness probe to a self-signed pod server",
  ignore: privateCriMissing,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cri = await privateCri("https");
    const subnet = cri.env.KTS_CRI_SUBNET!;
    const node = `h7tls-${crypto.randomUUID().slice(0, 6)}`;
    const seen: { path: string; agent: string }[] = [];
    let healthy = true;
    const { certPem, keyPem } = generateSelfSignedPair("pod", Date.now());
    const tlsPort = freePort("0.0.0.0");
    await using _server = Deno.serve({
      hostname: "0.0.0.0",
      port: tlsPort,
      cert: certPem,
      key: keyPem,
      onListen() {},
    }, (request) => {
      const path = new URL(request.url).pathname;
      seen.push({ path, agent: request.headers.get("user-agent") ?? "" });
      if (path === "/healthz" && !healthy) {
        return new Response("down", { status: 500 });
      }
      return new Response("ok");
    });
    const dir = await Deno.makeTempDir({ prefix: "kts-https-" });
    await Deno.mkdir(`${dir}/manifests`);
    const relay = `exec nc -ll -p 8443 -e nc ${gatewayOf(subnet)} ${tlsPort}`;
    await Deno.writeTextFile(
      `${dir}/manifests/tls.json`,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "tls" },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{
            name: "web",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sh", "-c", relay],
            livenessProbe: {
              httpGet: { path: "/healthz", port: 8443, scheme: "HTTPS" },
              initialDelaySeconds: 1,
              periodSeconds: 1,
              timeoutSeconds: 2,
              failureThreshold: 1,
            },
          }, {
            // started after web, whose relay is listening by then
            name: "hook",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sleep", "3600"],
            lifecycle: {
              postStart: {
                httpGet: { path: "/hook", port: 8443, scheme: "HTTPS" },
              },
            },
          }],
        },
      }),
    );
    const args = await writeKubeletConfig(
      dir,
      podNetworkFields(dir, cri.endpoint, subnet, freePort()),
      ["--hostname-override", node],
    );
    const { grants, child } = await spawnBundled(dir, args);
    const runtime = createCriRuntime({
      endpoint: cri.endpoint,
      timeoutMs: 30_000,
    });
    const stderr = collectStderr(child);
    const webAttempts = async () =>
      (await runtime.listContainers({})).containers
        .filter((c) => c.metadata?.name === "web")
        .map((c) => c.metadata?.attempt ?? 0);
    await finishBundled({ child, stderr }, { runtime, dir }, async () => {
      // no grant beyond the planned lists: net scoped to the pod range, sys by name
      assertScopedPodNetworkGrants(grants, subnet);
      await waitFor(
        "the HTTPS postStart hook and liveness probe to reach the pod",
        () =>
          (seen.some((s) => s.path === "/hook") &&
            seen.filter((s) => s.path === "/healthz").length >= 3) ||
          undefined,
        40_000,
      );
      assert.ok(
        seen.some((s) =>
          s.path === "/hook" && s.agent === "kube-lifecycle/1.34"
        ),
      );
      assert.ok(
        seen.some((s) =>
          s.path === "/healthz" && s.agent === "kube-probe/1.34"
        ),
      );
      assert.doesNotMatch(
        stderr.text(),
        /PostStart hook failed|Liveness probe failed/,
      );
      assert.deepEqual(await webAttempts(), [0], "healthy: no restart");
      healthy = false;
      await waitFor(
        "a failed HTTPS liveness probe to restart web",
        async () => (await webAttempts()).some((a) => a >= 1) || undefined,
        30_000,
      );
    }).catch((error) => {
      throw new Error(
        `${error.message}\nseen: ${JSON.stringify(seen.slice(-5))}`,
      );
    });
  },
});
