/**
 * The bundled kubelet under exactly its planned permission lists on a real containerd: a
 * private runtime-only instance (scripts/cri_env.sh with its own root, bridge and subnet, so
 * the kubelet's orphan clean-up never sees other tests' pods; skipped without
 * `KUBELET_TS_CRI_ENDPOINT`/`KUBELET_TS_CRI_ROOT` or root). With `podCIDR` set to the range of
 * that instance's CNI config, the plan grants that range (and no other host), an httpGet
 * liveness probe against busybox `httpd` on the pod IP passes, a tcpSocket readiness probe
 * marks the pod ready, an httpGet postStart hook reaches the pod, and once the served file is
 * gone the liveness probe fails and the container is restarted.
 */
import assert from "node:assert/strict";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import {
  assertScopedPodNetworkGrants,
  collectStderr,
  finishBundled,
  freePort,
  podNetworkFields,
  spawnBundled,
  writeKubeletConfig,
} from "./_helpers.ts";
import { criEnv, endpoint, IMAGE, waitFor } from "../pod/_containerd_e2e.ts";
import { claimSubnet } from "../_subnets.ts";

const criRoot = Deno.env.get("KUBELET_TS_CRI_ROOT") ?? "";
const isRoot = Deno.build.os === "linux" && Deno.uid() === 0;

/** The first IPAM subnet of a runtime's CNI config (scripts/cri_env.sh writes one). */
async function cniSubnet(root: string): Promise<string> {
  const dir = `${root}/cni/net.d`;
  for await (const entry of Deno.readDir(dir)) {
    const text = await Deno.readTextFile(`${dir}/${entry.name}`);
    const match = /"subnet"\s*:\s*"([0-9./]+)"/.exec(text);
    if (match) return match[1]!;
  }
  throw new Error(`no IPv4 IPAM subnet in ${dir}`);
}

const SERVE =
  "mkdir -p /www && echo ok > /www/healthz && exec httpd -f -p 8080 -h /www";

Deno.test({
  name:
    "containerd, bundled with planned permissions: pod-IP httpGet liveness restarts, tcpSocket readiness, httpGet postStart",
  ignore: !endpoint || !criRoot || !isRoot,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const id = crypto.randomUUID().slice(0, 6);
    // released after the instance below goes down (disposal runs in reverse order)
    await using claim = await claimSubnet();
    const env = {
      KTS_CRI_ROOT: `${criRoot}-probes-${id}`,
      KTS_CRI_RUNTIME_ONLY: "1",
      KTS_CRI_BRIDGE: `ktsn${id}`,
      KTS_CRI_SUBNET: claim.subnet,
    };
    const lines = await criEnv("up", env);
    // the private instance goes down however the test ends (after the finally below)
    await using _instance = {
      async [Symbol.asyncDispose]() {
        await criEnv("down", env);
      },
    };
    const privateEndpoint = /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(lines)?.[1];
    assert.ok(privateEndpoint, `no endpoint in: ${lines}`);
    const node = `probes-${id}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-probes-" });
    await Deno.mkdir(`${dir}/manifests`);
    const subnet = await cniSubnet(env.KTS_CRI_ROOT);
    assert.equal(subnet, env.KTS_CRI_SUBNET);
    const probe = { periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 1 };
    await Deno.writeTextFile(
      `${dir}/manifests/web.json`,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{
            name: "web",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sh", "-c", SERVE],
            livenessProbe: {
              httpGet: { path: "/healthz", port: 8080 },
              initialDelaySeconds: 2,
              ...probe,
            },
            readinessProbe: { tcpSocket: { port: 8080 }, ...probe },
          }, {
            // started after web: its postStart hook (run once, no retry) finds httpd up
            name: "hook",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sleep", "3600"],
            lifecycle: {
              postStart: { httpGet: { path: "/healthz", port: 8080 } },
            },
          }],
        },
      }),
    );
    const args = await writeKubeletConfig(
      dir,
      podNetworkFields(dir, privateEndpoint, subnet, freePort()),
      ["--hostname-override", node],
    );
    const { grants, child } = await spawnBundled(dir, args);
    const runtime = createCriRuntime({
      endpoint: privateEndpoint,
      timeoutMs: 30_000,
    });
    // the kubelet's "Pod status" lines: containers=["web=<state>/<restarts>"] ready=[...]
    const stderr = collectStderr(child);
    const statusLines = () =>
      stderr.text().split("\n").filter((l) =>
        l.includes('"Pod status"') && l.includes(`pod="default/web-${node}"`)
      );
    const restarts = (line: string) =>
      Number(/web=\w+\/(\d+)/.exec(line)?.[1] ?? 0);
    const mine = (name: string) => name.endsWith(node);
    await finishBundled({ child, stderr }, { runtime, dir, mine }, async () => {
      // the pod network is granted as a range, and net stays scoped
      assertScopedPodNetworkGrants(grants, subnet);
      await waitFor(
        "the tcpSocket readiness probe to mark web ready, hook running",
        () =>
          statusLines().some((l) =>
            /ready=\["(web","hook|hook","web)"\]/.test(l) &&
            l.includes("hook=running/0")
          ) || undefined,
      );
      assert.doesNotMatch(stderr.text(), /PostStart hook failed/);
      // a few liveness periods pass against the live server without a restart
      await new Promise((r) => setTimeout(r, 4_000));
      assert.ok(statusLines().every((l) => restarts(l) === 0), stderr.text());
      assert.ok(
        statusLines().every((l) => !/hook=\w+\/[1-9]/.test(l)),
        stderr.text(),
      );
      const { containers } = await runtime.listContainers({});
      const first = containers.find((c) =>
        c.labels["io.kubernetes.pod.name"] === `web-${node}` &&
        c.metadata?.name === "web" && c.state === 1
      );
      assert.ok(first, "the web container runs");
      assert.equal(first.metadata?.attempt, 0);
      await runtime.execSync({
        containerId: first.id,
        cmd: ["rm", "/www/healthz"],
        timeout: 5n,
      });
      await waitFor(
        "the kubelet to report restartCount >= 1",
        () => statusLines().some((l) => restarts(l) >= 1) || undefined,
        30_000,
      );
      const again = (await runtime.listContainers({})).containers.filter((c) =>
        c.labels["io.kubernetes.pod.name"] === `web-${node}` &&
        c.metadata?.name === "web"
      );
      assert.ok(
        again.some((c) => (c.metadata?.attempt ?? 0) >= 1),
        "a new container attempt in the runtime",
      );
    });
  },
});
