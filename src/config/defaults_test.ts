import assert from "node:assert/strict";
import { readYaml } from "../util/yaml.ts";
import { createFeatureGates } from "../features/mod.ts";
import {
  applyKubeletConfigurationDefaults,
  ConfigError,
  defaultEvictionHard,
  defaultFlagsOnlyKubeletConfiguration,
  defaultKubeletConfiguration,
  loadConfigFile,
  toKubeletConfigurationYaml,
} from "./mod.ts";

const GOLDEN_URL = new URL(
  "./testdata/default_v1beta1.yaml.golden",
  import.meta.url,
);

Deno.test("defaultKubeletConfiguration() equals the upstream v1.34 default document", async () => {
  const golden = (await readYaml(await Deno.readTextFile(GOLDEN_URL))).value;
  assert.deepEqual(defaultKubeletConfiguration(), golden);
});

Deno.test("toKubeletConfigurationYaml() renders the default document byte for byte", async () => {
  const golden = await Deno.readTextFile(GOLDEN_URL);
  assert.equal(
    await toKubeletConfigurationYaml(defaultKubeletConfiguration()),
    golden,
  );
});

Deno.test("loadConfigFile() of an envelope-only file gives the defaults plus evictionHard", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/kubelet.yaml`;
    await Deno.writeTextFile(
      path,
      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n",
    );
    const loaded = await loadConfigFile(path, { os: "linux" });
    const golden = (await readYaml(await Deno.readTextFile(GOLDEN_URL)))
      .value as Record<string, unknown>;
    golden.evictionHard = {
      "memory.available": "100Mi",
      "nodefs.available": "10%",
      "nodefs.inodesFree": "5%",
      "imagefs.available": "15%",
      "imagefs.inodesFree": "5%",
    };
    assert.deepEqual(loaded, golden);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("applyKubeletConfigurationDefaults() re-defaults Go zero values but keeps explicit pointers", async () => {
  const c = await applyKubeletConfigurationDefaults({
    port: 0,
    maxPods: 0,
    syncFrequency: "0s",
    healthzPort: 0,
    registryPullQPS: 0,
    cgroupsPerQOS: false,
    resolvConf: "",
    enforceNodeAllocatable: [],
    podPidsLimit: -5,
  });
  assert.equal(c.port, 10250);
  assert.equal(c.maxPods, 110);
  assert.equal(c.syncFrequency, "1m0s");
  assert.equal(c.healthzPort, 0);
  assert.equal(c.registryPullQPS, 0);
  assert.equal(c.cgroupsPerQOS, false);
  assert.equal(c.resolvConf, "");
  assert.deepEqual(c.enforceNodeAllocatable, []);
  assert.equal(c.podPidsLimit, -1);
});

Deno.test("applyKubeletConfigurationDefaults() derives nodeStatusReportFrequency and serializeImagePulls", async () => {
  const a = await applyKubeletConfigurationDefaults({
    nodeStatusUpdateFrequency: "1m",
  });
  assert.equal(a.nodeStatusReportFrequency, "1m0s");
  assert.equal(a.nodeStatusUpdateFrequency, "1m0s");
  const b = await applyKubeletConfigurationDefaults({
    maxParallelImagePulls: 3,
  });
  assert.equal(b.serializeImagePulls, false);
  const c = await applyKubeletConfigurationDefaults({
    maxParallelImagePulls: 1,
  });
  assert.equal(c.serializeImagePulls, true);
});

Deno.test("applyKubeletConfigurationDefaults() applies gate-dependent defaults", async () => {
  const c = await applyKubeletConfigurationDefaults({
    featureGates: {
      KubeletCrashLoopBackOffMax: true,
      KubeletEnsureSecretPulledImages: true,
    },
  });
  assert.equal(c.crashLoopBackOff.maxContainerRestartPeriod, "5m0s");
  assert.equal(
    c.imagePullCredentialsVerificationPolicy,
    "NeverVerifyPreloadedImages",
  );
  const gates = createFeatureGates();
  gates.setFromMap({ KubeletCrashLoopBackOffMax: true });
  const d = await applyKubeletConfigurationDefaults({}, {
    featureGates: gates,
  });
  assert.equal(d.crashLoopBackOff.maxContainerRestartPeriod, "5m0s");
  assert.equal(
    defaultKubeletConfiguration().crashLoopBackOff.maxContainerRestartPeriod,
    undefined,
  );
});

Deno.test("applyKubeletConfigurationDefaults() rejects an unknown gate with a ConfigError", async () => {
  await assert.rejects(
    async () =>
      await applyKubeletConfigurationDefaults({ featureGates: { Foo: true } }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message === "unrecognized feature gate: Foo" &&
      err.field === "featureGates",
  );
});

Deno.test("applyKubeletConfigurationDefaults() does not modify its input", async () => {
  const doc = { port: 0, logging: { format: "" } };
  await applyKubeletConfigurationDefaults(doc);
  assert.deepEqual(doc, { port: 0, logging: { format: "" } });
});

Deno.test("applyKubeletConfigurationDefaults() keeps explicit negative and false values (upstream 'all negative')", async () => {
  const doc = {
    enableServer: false,
    syncFrequency: "-1s",
    port: -1,
    readOnlyPort: -1,
    registryPullQPS: -1,
    registryBurst: -1,
    eventRecordQPS: -1,
    eventBurst: -1,
    enableDebuggingHandlers: false,
    healthzPort: -1,
    oomScoreAdj: -1,
    nodeLeaseDurationSeconds: -1,
    imageGCHighThresholdPercent: -1,
    imageGCLowThresholdPercent: -1,
    cgroupsPerQOS: false,
    maxPods: -1,
    podPidsLimit: -1,
    cpuCFSQuota: false,
    nodeStatusMaxImages: -1,
    maxOpenFiles: -1,
    kubeAPIQPS: -1,
    kubeAPIBurst: -1,
    serializeImagePulls: false,
    iptablesMasqueradeBit: -1,
    iptablesDropBit: -1,
    failSwapOn: false,
    containerLogMaxFiles: -1,
    containerLogMaxWorkers: -1,
    enableSystemLogHandler: false,
    memoryThrottlingFactor: -1,
    registerNode: false,
    localStorageCapacityIsolation: false,
    failCgroupV1: false,
  };
  const c = await applyKubeletConfigurationDefaults(doc);
  for (const [key, value] of Object.entries(doc)) {
    const expected = key === "syncFrequency" ? "-1s" : value;
    assert.equal((c as Record<string, unknown>)[key], expected, key);
  }
});

Deno.test("applyKubeletConfigurationDefaults() keeps explicit positive values (upstream 'all positive')", async () => {
  const doc = {
    port: 1,
    maxPods: 1,
    podPidsLimit: 1,
    registryBurst: 1,
    eventBurst: 1,
    kubeAPIBurst: 1,
    nodeLeaseDurationSeconds: 1,
    containerLogMaxSize: "1Mi",
    memoryThrottlingFactor: 1,
    cpuCFSQuotaPeriod: "1s",
    hairpinMode: "none",
    logging: { format: "json", flushFrequency: "1s", verbosity: 5 },
  };
  const c = await applyKubeletConfigurationDefaults(doc);
  assert.equal(c.port, 1);
  assert.equal(c.maxPods, 1);
  assert.equal(c.podPidsLimit, 1);
  assert.equal(c.containerLogMaxSize, "1Mi");
  assert.equal(c.memoryThrottlingFactor, 1);
  assert.equal(c.cpuCFSQuotaPeriod, "1s");
  assert.equal(c.hairpinMode, "none");
  assert.deepEqual(c.logging, {
    format: "json",
    flushFrequency: "1s",
    verbosity: 5,
    options: { text: { infoBufferSize: "0" }, json: { infoBufferSize: "0" } },
  });
});

Deno.test("defaultEvictionHard() follows the per-OS upstream maps", () => {
  assert.deepEqual(Object.keys(defaultEvictionHard("linux")).sort(), [
    "imagefs.available",
    "imagefs.inodesFree",
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
  ]);
  assert.deepEqual(defaultEvictionHard("windows"), {
    "memory.available": "500Mi",
    "nodefs.available": "10%",
    "imagefs.available": "15%",
  });
  assert.deepEqual(defaultEvictionHard("darwin"), {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "imagefs.available": "15%",
  });
});

Deno.test("defaultFlagsOnlyKubeletConfiguration() differs from file defaults in the 4 legacy values", () => {
  const flags = defaultFlagsOnlyKubeletConfiguration() as Record<
    string,
    unknown
  >;
  const file = defaultKubeletConfiguration() as Record<string, unknown>;
  assert.equal(flags.readOnlyPort, 10255);
  assert.equal(file.readOnlyPort, undefined);
  const same: Record<string, unknown> = {
    ...flags,
    authentication: file.authentication,
    authorization: file.authorization,
  };
  delete same.readOnlyPort;
  assert.deepEqual(same, file);
  assert.equal(flags.evictionHard, undefined);
});

Deno.test("applyKubeletConfigurationDefaults() rejects wrong types with the field path", async () => {
  await assert.rejects(
    async () =>
      await applyKubeletConfigurationDefaults({
        logging: { verbosity: "loud" },
      }),
    (err: unknown) =>
      err instanceof ConfigError && err.field === "logging.verbosity" &&
      /^field logging\.verbosity: expected a uint32/.test(err.message),
  );
});
