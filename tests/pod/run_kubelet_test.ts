import assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import { CRI_URL_GRANT, planPermissions } from "../../src/permissions/mod.ts";
import {
  healthzListenAddress,
  resolveNodeName,
  runKubelet,
} from "../../src/kubelet/run_kubelet.ts";

Deno.test("resolveNodeName() lower-cases the hostname override and falls back to the host name", () => {
  assert.equal(resolveNodeName("  Node-A.Example "), "node-a.example");
  assert.equal(resolveNodeName(""), Deno.hostname().toLowerCase());
  assert.equal(resolveNodeName(undefined), Deno.hostname().toLowerCase());
});

Deno.test("runKubelet() runs static pods on a sim:// runtime and returns 0 after Ctrl-C", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-run-kubelet-" });
  try {
    await Deno.mkdir(`${dir}/manifests`);
    await Deno.writeTextFile(
      `${dir}/manifests/web.yaml`,
      "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: httpd, image: busybox:1.36, command: [httpd, -f]}]}\n",
    );
    const logger = new CaptureLogger();
    const ac = new AbortController();
    const running = runKubelet({
      config: {
        staticPodPath: `${dir}/manifests`,
        containerRuntimeEndpoint: "sim://default",
        podLogsDir: `${dir}/logs`,
        fileCheckFrequency: "20s",
        syncFrequency: "1m",
        // Tests run in parallel: never bind the default 10248.
        healthzPort: 0,
      },
      flags: { hostnameOverride: "Test-Node", rootDir: `${dir}/root` },
      logger,
      signal: ac.signal,
    });
    const deadline = Date.now() + 30_000;
    while (
      !logger.records.some((r) =>
        r.msg === "Pod status" && r.fields.phase === "Running"
      ) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    ac.abort();
    assert.equal(await running, 0);
    const status = logger.records.find((r) =>
      r.msg === "Pod status" && r.fields.phase === "Running"
    );
    assert.equal(status?.fields.pod, "default/web-test-node");
    // --root-dir reaches the syncer: the container got a termination-message file there
    const pods = [...Deno.readDirSync(`${dir}/root/pods`)].map((d) => d.name);
    assert.equal(pods.length, 1);
    const files = [
      ...Deno.readDirSync(`${dir}/root/pods/${pods[0]}/containers/httpd`),
    ];
    assert.equal(files.length, 1);
    assert.match(files[0]!.name, /^[0-9a-f]{8}$/);
    assert.ok(
      logger.messages().includes("Kubelet stopped; containers keep running"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runKubelet() returns 1 with a clear error for an unusable runtime endpoint", async () => {
  const logger = new CaptureLogger();
  const code = await runKubelet({
    config: { containerRuntimeEndpoint: "tcp://10.0.0.1:1234" },
    flags: {},
    logger,
    signal: AbortSignal.abort(),
  });
  assert.equal(code, 1);
  const error = logger.records.find((r) => r.severity === "error");
  assert.equal(error?.msg, "Cannot set up the container runtime");
  assert.match(String(error?.fields.err), /container-runtime-endpoint/);
});

Deno.test("runKubelet() rejects a malformed duration naming the field", async () => {
  await assert.rejects(
    runKubelet({
      config: {
        containerRuntimeEndpoint: "sim://default",
        runtimeRequestTimeout: "soon",
      },
      flags: {},
      logger: new CaptureLogger(),
      signal: AbortSignal.abort(),
    }),
    (e: unknown) =>
      e instanceof RangeError && /"runtimeRequestTimeout"/.test(e.message),
  );
});

Deno.test("healthzListenAddress() binds exactly what the permission plan grants", async () => {
  const cases = [
    {},
    { healthzBindAddress: "", healthzPort: 10248 },
    { healthzBindAddress: "10.1.2.3", healthzPort: 12345 },
    { healthzBindAddress: "::1", healthzPort: 12346 },
    { healthzBindAddress: "10.1.2.3", healthzPort: 0 },
  ];
  for (const config of cases) {
    const { hostname, port } = healthzListenAddress(config);
    // port 0 leaves the 10250 API (a later listener) out of the plan.
    const plan = await planPermissions({
      config: { ...config, port: 0 },
      flags: {},
    }, {
      readFile: () => undefined,
    });
    const tcp = plan.net.filter((n) =>
      !n.startsWith("unix:") && n !== CRI_URL_GRANT
    );
    const host = hostname.includes(":") ? `[${hostname}]` : hostname;
    assert.deepEqual(
      tcp,
      port === 0 ? [] : [`${host}:${port}`],
      JSON.stringify(config),
    );
  }
});

function hostHasAppArmor(): boolean {
  try {
    return Deno.readTextFileSync("/sys/module/apparmor/parameters/enabled")
      .startsWith("Y");
  } catch {
    return false;
  }
}

Deno.test({
  name:
    "runKubelet() fails a static pod asking for AppArmor on a host without it and runs the others",
  ignore: hostHasAppArmor(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "kts-run-kubelet-" });
    try {
      await Deno.mkdir(`${dir}/manifests`);
      const pod = (name: string, profile: string) =>
        `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec: {containers: [{name: c, image: busybox:1.36, command: [httpd, -f], securityContext: {appArmorProfile: {type: ${profile}}}}]}\n`;
      await Deno.writeTextFile(
        `${dir}/manifests/confined.yaml`,
        pod("confined", "RuntimeDefault"),
      );
      await Deno.writeTextFile(
        `${dir}/manifests/free.yaml`,
        pod("free", "Unconfined"),
      );
      const logger = new CaptureLogger();
      const ac = new AbortController();
      const running = runKubelet({
        config: {
          staticPodPath: `${dir}/manifests`,
          containerRuntimeEndpoint: "sim://default",
          podLogsDir: `${dir}/logs`,
          fileCheckFrequency: "20s",
          syncFrequency: "1m",
          healthzPort: 0,
        },
        flags: { hostnameOverride: "node-a", rootDir: `${dir}/root` },
        logger,
        signal: ac.signal,
      });
      const phase = (pod: string) =>
        logger.records.find((r) =>
          r.msg === "Pod status" && r.fields.pod === `default/${pod}-node-a`
        )?.fields.phase;
      const deadline = Date.now() + 30_000;
      while (
        (phase("confined") === undefined || phase("free") === undefined) &&
        Date.now() < deadline
      ) {
        await new Promise((r) => setTimeout(r, 20));
      }
      ac.abort();
      assert.equal(await running, 0);
      assert.equal(phase("confined"), "Failed");
      assert.notEqual(phase("free"), "Failed");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
