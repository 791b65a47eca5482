/**
 * The kubelet API of a whole kubelet (runKubelet on the simulated runtime): it starts with the
 * kubelet, serves the static pod with its status and the container's log, and the read-only
 * port serves only its subset.
 */
import assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import { runKubelet } from "../../src/kubelet/run_kubelet.ts";
import { makeCertificate } from "../../src/server/testing.ts";
import { freePort, get } from "./_helpers.ts";

Deno.test("runKubelet() serves /pods, /containerLogs and the read-only port", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-run-api-" });
  const ca = makeCertificate({ commonName: "ca", ca: true, extKeyUsages: [] });
  const client = makeCertificate({ commonName: "admin", issuer: ca });
  await Deno.writeTextFile(`${dir}/ca.crt`, ca.certPem);
  await Deno.mkdir(`${dir}/manifests`);
  // The simulated runtime writes CRI log files only when its scenario says so.
  await Deno.writeTextFile(
    `${dir}/scenario.json`,
    JSON.stringify({ logFiles: true }),
  );
  await Deno.writeTextFile(
    `${dir}/manifests/web.yaml`,
    "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: app, image: busybox:1.36, command: [sh, -c, 'echo hello; echo world; sleep 3600']}]}\n",
  );
  const logger = new CaptureLogger();
  const ac = new AbortController();
  const port = freePort();
  const readOnlyPort = freePort();
  const running = runKubelet({
    config: {
      staticPodPath: `${dir}/manifests`,
      containerRuntimeEndpoint: `sim://${dir}/scenario.json`,
      podLogsDir: `${dir}/logs`,
      fileCheckFrequency: "20s",
      syncFrequency: "1m",
      healthzPort: 0,
      address: "127.0.0.1",
      port,
      readOnlyPort,
      authentication: {
        x509: { clientCAFile: `${dir}/ca.crt` },
        anonymous: { enabled: false },
        webhook: { enabled: false },
      },
      authorization: { mode: "AlwaysAllow" },
    },
    flags: {
      hostnameOverride: "api-node",
      rootDir: `${dir}/root`,
      certDir: `${dir}/pki`,
    },
    logger,
    signal: ac.signal,
  });
  try {
    const deadline = Date.now() + 30_000;
    const ready = () =>
      logger.messages().includes("Serving the kubelet API") &&
      logger.records.some((r) =>
        r.msg === "Pod status" && r.fields.phase === "Running"
      );
    while (!ready() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    const url = `https://127.0.0.1:${port}`;
    const pods = JSON.parse(
      (await get(`${url}/pods`, { caPem, cert: client })).body,
    );
    assert.equal(pods.items[0].metadata.name, "web-api-node");
    assert.equal(pods.items[0].status.phase, "Running");
    const logs = await get(`${url}/containerLogs/default/web-api-node/app`, {
      caPem,
      cert: client,
    });
    assert.deepEqual(
      logs,
      { status: 200, body: "hello\nworld\n" },
      JSON.stringify(logger.records.filter((r) => r.severity === "error")),
    );
    const tail = await get(
      `${url}/containerLogs/default/web-api-node/app?tailLines=1&timestamps=true`,
      {
        caPem,
        cert: client,
      },
    );
    assert.match(tail.body, /^\d{4}-\d\d-\d\dT\S+Z world\n$/);
    assert.equal(
      (await get(
        `${url}/containerLogs/default/web-api-node/app?previous=true`,
        { caPem, cert: client },
      )).status,
      400,
    );
    assert.equal(
      (await get(`${url}/containerLogs/default/nope/app`, {
        caPem,
        cert: client,
      })).status,
      404,
    );
    assert.equal(
      (await get(`${url}/containerLogs/default/web-api-node/nope`, {
        caPem,
        cert: client,
      })).status,
      404,
    );
    assert.equal((await get(`${url}/pods`, { caPem })).status, 401);
    const metrics = await get(`${url}/metrics`, { caPem, cert: client });
    assert.match(metrics.body, /^kubelet_node_name\{node="api-node"\} 1$/m);
    assert.match(metrics.body, /^kubelet_running_pods 1$/m);
    assert.match(
      metrics.body,
      /^kubelet_running_containers\{container_state="running"\} 1$/m,
    );
    // The read-only port: plain HTTP, no authentication, no logs or configuration.
    const ro = `http://127.0.0.1:${readOnlyPort}`;
    const resource = await get(`${url}/metrics/resource`, {
      caPem,
      cert: client,
    });
    assert.match(
      resource.body,
      /^container_memory_working_set_bytes\{container="app",namespace="default",pod="web-api-node"\} \d+ \d+$/m,
    );
    assert.match(
      resource.body,
      /^pod_cpu_usage_seconds_total\{namespace="default",pod="web-api-node"\} [\d.e-]+ \d+$/m,
    );
    assert.match(
      resource.body,
      /^container_start_time_seconds\{container="app",/m,
    );
    assert.match(resource.body, /^node_memory_working_set_bytes \d+ \d+$/m);
    assert.match(resource.body, /^resource_scrape_error 0$/m);
    const roMetrics = await fetch(`${ro}/metrics`);
    assert.match(await roMetrics.text(), /^kubelet_running_pods 1$/m);
    const roPods = await fetch(`${ro}/pods`);
    assert.equal(JSON.parse(await roPods.text()).items.length, 1);
    for (
      const path of [
        "/containerLogs/default/web-api-node/app",
        "/configz",
        "/runningpods/",
      ]
    ) {
      const r = await fetch(`${ro}${path}`);
      await r.body?.cancel();
      assert.equal(r.status, 404, path);
    }
  } finally {
    ac.abort();
    assert.equal(await running, 0);
    await Deno.remove(dir, { recursive: true });
  }
});
