/**
 * A container's hostPort on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh; skipped without it): the kubelet sends the port mappings in the sandbox
 * config and the CNI portmap plugin of the cri_env conflist serves them on the host's addresses.
 * A private containerd keeps the iptables rules and the bridge of this test apart.
 */
import assert from "node:assert/strict";
import {
  privateCri,
  privateCriMissing,
  running,
  shContainer,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

/** A non-loopback IPv4 address of the host outside the test bridges (10.x). */
function hostAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.") &&
    !i.address.startsWith("10.")
  )?.address;
}

/** The body of `url`, or undefined while it does not answer. */
async function fetchText(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    const body = await res.text();
    return res.ok ? body : undefined;
  } catch {
    return undefined;
  }
}

Deno.test({
  name: "containerd: a hostPort is reachable from the host (portmap)",
  ignore: privateCriMissing,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const address = hostAddress();
    assert.ok(address, "the host has no non-loopback IPv4 address");
    await using cri = await privateCri("hport");
    await using e2e = await startE2e({ endpoint: cri.endpoint });
    const hostPort = 18000 + Math.floor(Math.random() * 2000);
    const marker = `hello-${e2e.node}`;
    await e2e.write("web.json", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web" },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [shContainer(
          "httpd",
          `mkdir -p /tmp/www && echo ${marker} > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www`,
          { ports: [{ containerPort: 8080, hostPort, protocol: "TCP" }] },
        )],
      },
    });
    await waitFor("the httpd container running", async () => {
      const cs = running(await e2e.containers("web"));
      return cs.length === 1 ? true : undefined;
    });
    const viaHost = await waitFor(
      `http://${address}:${hostPort}/ answering`,
      () => fetchText(`http://${address}:${hostPort}/index.html`),
      30_000,
    );
    assert.equal(viaHost.trim(), marker);
    // portmap's snat (route_localnet on the bridge) lets the loopback address in too
    const viaLoopback = await waitFor(
      `http://127.0.0.1:${hostPort}/ answering`,
      () => fetchText(`http://127.0.0.1:${hostPort}/index.html`),
      10_000,
    );
    assert.equal(viaLoopback.trim(), marker);
    // a port nothing maps does not answer
    assert.equal(
      await fetchText(`http://${address}:${hostPort + 1}/index.html`),
      undefined,
    );
  },
});
