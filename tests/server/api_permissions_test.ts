/** The permission plan already holds every grant the kubelet API takes (no plan change needed). */
import assert from "node:assert/strict";
import { planPermissions } from "../../src/permissions/mod.ts";
import { kubeletApiConfig } from "../../src/kubelet/serve_kubelet_api.ts";

Deno.test("planPermissions() grants the kubelet API's listener, cert dir and certificate files", async () => {
  const flags = { certDir: "/srv/pki", rootDir: "/srv/kubelet" };
  const config = {
    address: "10.0.0.5",
    port: 10250,
    readOnlyPort: 10255,
    tlsCertFile: "/etc/kubelet/tls.crt",
    tlsPrivateKeyFile: "/etc/kubelet/tls.key",
    authentication: { x509: { clientCAFile: "/etc/kubernetes/pki/ca.crt" } },
  };
  const plan = await planPermissions({ config, flags }, {
    readFile: () => undefined,
  });
  const api = kubeletApiConfig({ config, flags });
  assert.ok(plan.net.includes(`${api.address}:${api.port}`));
  assert.ok(plan.net.includes(`${api.address}:${api.readOnlyPort}`));
  for (
    const file of [api.tlsCertFile, api.tlsPrivateKeyFile, api.clientCAFile]
  ) {
    assert.ok(plan.read.includes(file!), file);
  }
  // Self-signing writes kubelet.crt/kubelet.key under the cert dir.
  assert.ok(plan.read.includes(api.certDir!));
  assert.ok(plan.write.includes(api.certDir!));
  // The default cert dir is granted too (the flag table's default reaches the plan).
  const defaults = await planPermissions({
    config: {},
    flags: { certDir: kubeletApiConfig({ config: {}, flags: {} }).certDir },
  }, { readFile: () => undefined });
  assert.ok(defaults.net.includes("0.0.0.0:10250"));
  assert.ok(!defaults.net.some((n) => n.endsWith(":10255")));
});
