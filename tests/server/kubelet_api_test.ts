/** The kubelet API as `runKubelet` wires it: configuration defaults and the pods it serves. */
import assert from "node:assert/strict";
import { systemClock } from "../../src/clock/mod.ts";
import {
  kubeletApiConfig,
  runKubeletApi,
} from "../../src/kubelet/serve_kubelet_api.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import type { Pod } from "../../src/pod/mod.ts";
import { makeCertificate } from "../../src/server/testing.ts";
import { freePort, get } from "./_helpers.ts";

Deno.test("kubeletApiConfig() applies the config-file defaults (secure ones)", () => {
  const config = kubeletApiConfig({ config: {}, flags: {} });
  assert.equal(config.address, "0.0.0.0");
  assert.equal(config.port, 10250);
  assert.equal(config.readOnlyPort, 0);
  assert.equal(config.anonymousAuth, false);
  assert.deepEqual(config.webhookAuthn, { enabled: true, cacheTtlMs: 120_000 });
  assert.equal(config.authorizationMode, "Webhook");
  assert.deepEqual(config.webhookAuthz, {
    allowedTtlMs: 300_000,
    deniedTtlMs: 30_000,
  });
  assert.equal(config.certDir, "/var/lib/kubelet/pki");
  const custom = kubeletApiConfig({
    config: {
      authentication: { webhook: { cacheTTL: "10s" } },
      authorization: {
        mode: "AlwaysAllow",
        webhook: { cacheUnauthorizedTTL: "1m" },
      },
    },
    flags: { certDir: "/srv/pki", kubeconfig: "/etc/k.conf" },
  });
  assert.equal(custom.webhookAuthn.cacheTtlMs, 10_000);
  assert.equal(custom.webhookAuthz.deniedTtlMs, 60_000);
  assert.equal(custom.authorizationMode, "AlwaysAllow");
  assert.equal(custom.kubeconfig, "/etc/k.conf");
});

function deps(logger: CaptureLogger) {
  const pod: Pod = {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { containers: [{ name: "app", image: "busybox" }] },
  } as Pod;
  return {
    clock: systemClock,
    logger,
    kubelet: {
      podConfig: { pods: () => [pod] },
      syncLoop: { latestLoopEntryTime: () => undefined },
    },
    statuses: {
      getPodStatus: (uid: string) =>
        uid === "u1" ? { phase: "Running" } : undefined,
    },
    runtime: {
      listPodSandbox: () => Promise.resolve([]),
      listContainers: () => Promise.resolve([]),
    },
  } as unknown as Parameters<typeof runKubeletApi>[0];
}

Deno.test("runKubeletApi() logs and serves nothing when webhooks are asked for without a kubeconfig", async () => {
  const logger = new CaptureLogger();
  await runKubeletApi(deps(logger), {
    config: { address: "127.0.0.1", port: freePort() },
    flags: {},
    nodeName: "node-a",
    resyncIntervalMs: 60_000,
    signal: new AbortController().signal,
  });
  const error = logger.records.find((r) => r.severity === "error");
  assert.equal(error?.msg, "Cannot serve the kubelet API");
  assert.match(String(error?.fields.err), /needs a kubeconfig/);
});

Deno.test("runKubeletApi() serves the kubelet's pods with their latest status", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-kubelet-api-" });
  const ca = makeCertificate({ commonName: "ca", ca: true, extKeyUsages: [] });
  const cert = makeCertificate({ commonName: "admin", issuer: ca });
  await Deno.writeTextFile(`${dir}/ca.crt`, ca.certPem);
  const logger = new CaptureLogger();
  const ac = new AbortController();
  const port = freePort();
  const running = runKubeletApi(deps(logger), {
    config: {
      address: "127.0.0.1",
      port,
      authentication: {
        x509: { clientCAFile: `${dir}/ca.crt` },
        webhook: { enabled: false },
      },
      authorization: { mode: "AlwaysAllow" },
    },
    flags: { certDir: `${dir}/pki` },
    nodeName: "node-a",
    resyncIntervalMs: 60_000,
    signal: ac.signal,
  });
  try {
    while (!logger.messages().includes("Serving the kubelet API")) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    const r = await get(`https://127.0.0.1:${port}/pods`, { caPem, cert });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body).items[0].status, { phase: "Running" });
    const configz = await get(`https://127.0.0.1:${port}/configz`, {
      caPem,
      cert,
    });
    const shown = JSON.parse(configz.body).kubeletconfig;
    assert.equal(shown.port, port);
    // the self-signed pair it serves, as upstream names it
    assert.equal(shown.tlsCertFile, `${dir}/pki/kubelet.crt`);
    assert.equal(shown.tlsPrivateKeyFile, `${dir}/pki/kubelet.key`);
  } finally {
    ac.abort();
    await running;
    await Deno.remove(dir, { recursive: true });
  }
});
