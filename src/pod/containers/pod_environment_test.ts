import assert from "node:assert/strict";
import { CaptureLogger } from "../../log/testing.ts";
import { FakeRuntime } from "../../runtime/testing.ts";
import type { HostsFileIo } from "./hosts_file.ts";
import {
  createPodEnvironment,
  hasEveryPermission,
  readAppArmorEnabled,
  readNodeResources,
  readPodEnvironmentOptions,
  sandboxConfigFailure,
} from "./pod_environment.ts";
import type { Pod } from "../types.ts";

const POD: Pod = {
  metadata: { name: "web", namespace: "prod", uid: "u-1" },
  spec: { containers: [{ name: "app", image: "busybox" }] },
};

function memoryIo(): HostsFileIo & { files: Map<string, string> } {
  const files = new Map<string, string>();
  return {
    files,
    mkdir: () => Promise.resolve(),
    writeTextFile: (path, text) => {
      files.set(path, text);
      return Promise.resolve();
    },
    readNodeHosts: () => Promise.resolve(""),
  };
}

Deno.test("createPodEnvironment() reads resolv.conf for each sandbox", async () => {
  let reads = 0;
  const env = createPodEnvironment({
    images: new FakeRuntime(),
    logger: new CaptureLogger(),
    readTextFile: (path) => {
      reads++;
      assert.equal(path, "/etc/kts-resolv.conf");
      return Promise.resolve("nameserver 10.0.0.53\n");
    },
  }, { resolvConf: "/etc/kts-resolv.conf", cgroups: { cgroupRoot: "/n" } });
  const first = await env.sandboxOptions();
  await env.sandboxOptions();
  assert.equal(reads, 2);
  assert.deepEqual(first.dns.host?.servers, ["10.0.0.53"]);
  assert.deepEqual(first.cgroups, { cgroupRoot: "/n" });
  const none = createPodEnvironment({
    images: new FakeRuntime(),
    logger: new CaptureLogger(),
    readTextFile: () => Promise.reject(new Error("must not read")),
  }, { resolvConf: "" });
  assert.equal((await none.sandboxOptions()).dns.host, undefined);
});

Deno.test("createPodEnvironment() resolves the image user through ImageStatus (root by default)", async () => {
  const runtime = new FakeRuntime();
  const io = memoryIo();
  const env = createPodEnvironment({
    images: runtime,
    logger: new CaptureLogger(),
    hostsIo: io,
  }, { rootDir: "/var/lib/kubelet" });
  const signal = new AbortController().signal;
  const plain = await env.containerOptions(POD, {
    imageRef: "sha256:1",
    podIPs: ["10.0.0.2"],
    signal,
  });
  assert.deepEqual(plain.imageUser, { uid: 0n });
  assert.equal(plain.hostsFileHostPath, "/var/lib/kubelet/pods/u-1/etc-hosts");
  assert.ok(
    io.files.get("/var/lib/kubelet/pods/u-1/etc-hosts")?.includes(
      "10.0.0.2\tweb\n",
    ),
  );
  runtime.respond(
    "imageStatus",
    () => ({ image: { id: "x", uid: { value: 1000n } } }),
  );
  assert.deepEqual(
    (await env.containerOptions(POD, { imageRef: "x", podIPs: [], signal }))
      .imageUser,
    { uid: 1000n },
  );
  runtime.respond(
    "imageStatus",
    () => ({ image: { id: "y", username: "www" } }),
  );
  const named = await env.containerOptions(POD, {
    imageRef: "y",
    podIPs: [],
    signal,
  });
  assert.deepEqual(named.imageUser, { username: "www" });
  assert.equal(named.hostsFileHostPath, undefined);
});

Deno.test("sandboxConfigFailure() uses upstream's reasons", () => {
  const error = new Error("open /etc/resolv.conf: no such file");
  assert.deepEqual(sandboxConfigFailure(POD, error, true), {
    action: "CreatePodSandbox",
    target: "web",
    reason: "CreatePodSandboxError",
    message:
      'Failed to generate sandbox config for pod "web_prod(u-1)": open /etc/resolv.conf: no such file',
  });
  assert.equal(
    sandboxConfigFailure(POD, error, false).reason,
    "ConfigPodSandboxError",
  );
});

Deno.test("readPodEnvironmentOptions() takes the configuration's fields", async () => {
  const options = await readPodEnvironmentOptions({
    cgroupRoot: "/n",
    cgroupsPerQOS: true,
    cgroupDriver: "cgroupfs",
    clusterDNS: ["10.96.0.10"],
  }, { logger: new CaptureLogger(), rootDir: "/r" });
  assert.deepEqual(options.cgroups, {
    cgroupRoot: "/n",
    cgroupsPerQOS: true,
    cgroupDriver: "cgroupfs",
  });
  assert.equal(options.resolvConf, "/etc/resolv.conf");
  assert.deepEqual(options.clusterDNS, ["10.96.0.10"]);
  assert.equal(options.rootDir, "/r");
  assert.ok((options.node?.memoryCapacity ?? 0) > 0);
  // a manager only where the kubelet may and should touch the host's cgroups
  assert.equal(options.podCgroups !== undefined, hasEveryPermission());
  // the root dir is shared at start by the kubelet itself with every permission, else the
  // agent (none listens at /r), which the kubelet names as the reason
  assert.equal(
    options.rootShare && "sharer" in options.rootShare,
    hasEveryPermission(),
  );
  const simulated = await readPodEnvironmentOptions({ cgroupRoot: "/n" }, {
    logger: new CaptureLogger(),
    manageCgroups: false,
    rootDir: "/r",
  });
  assert.equal(simulated.podCgroups, undefined);
  assert.equal(simulated.rootShare, undefined);
});

Deno.test("createPodEnvironment() hands pod cgroups to the manager and warns once per kind of failure", async () => {
  const logger = new CaptureLogger();
  const calls: string[] = [];
  let fail = false;
  const env = createPodEnvironment({ images: new FakeRuntime(), logger }, {
    resolvConf: "",
    podCgroups: {
      start: () => Promise.resolve(),
      ensurePod(pod) {
        calls.push(`ensure ${pod.metadata.uid}`);
        return fail ? Promise.reject(new Error("no")) : Promise.resolve();
      },
      removePod(pod) {
        calls.push(`remove ${pod.metadata.uid}`);
        return fail
          ? Promise.reject(new Deno.errors.NotCapable("no"))
          : Promise.resolve();
      },
      resizePod: () => Promise.resolve(),
      housekeeping: () => Promise.resolve(),
    },
  });
  await env.sandboxOptions(POD);
  await env.removePodCgroup(POD);
  assert.deepEqual(calls, ["ensure u-1", "remove u-1"]);
  fail = true;
  // a failed creation is logged and the sandbox goes ahead (runc makes the directories)
  await env.sandboxOptions(POD);
  await env.removePodCgroup(POD);
  await env.removePodCgroup(POD);
  const warnings = logger.records.filter((r) => r.severity === "warn");
  assert.deepEqual(warnings.map((w) => w.msg), [
    "Failed to create the pod cgroup",
    "Failed to remove the pod cgroup",
  ]);
});

Deno.test("readNodeResources() looks at /sys only with every permission", async () => {
  const logger = new CaptureLogger();
  const limited = await readNodeResources(logger, { hostAccess: false });
  assert.deepEqual(limited.hugepageSizes, []);
  assert.equal(limited.swapController, undefined);
  assert.ok(limited.memoryCapacity > 0);
  assert.equal(logger.records.filter((r) => r.severity === "warn").length, 1);
  assert.doesNotMatch(
    logger.records.map((r) => r.msg).join("\n"),
    /NotCapable|Requires \w+ access/,
  );
  // A simulated runtime loses nothing without /sys: no warning.
  const quiet = new CaptureLogger();
  await readNodeResources(quiet, { hostAccess: false, warnWithoutHost: false });
  assert.deepEqual(quiet.records.filter((r) => r.severity === "warn"), []);
});

Deno.test("readNodeResources() groups containers' OOM kills on cgroup v2 unless singleProcessOOMKill is true", async () => {
  const agentOn = (v2: boolean) =>
    ({
      fs: {
        exists: (path: string) =>
          Promise.resolve(v2 && path === "/sys/fs/cgroup/cgroup.controllers"),
        readDirNames: () => Promise.resolve([]),
      },
      swapController: () => Promise.resolve(undefined),
    }) as unknown as NonNullable<
      Parameters<typeof readNodeResources>[1]
    >["agent"];
  const cases: [boolean, boolean | undefined, boolean | undefined][] = [
    [true, undefined, true],
    [true, false, true],
    [true, true, undefined],
    [false, undefined, undefined],
    [false, false, undefined],
  ];
  for (const [v2, single, grouped] of cases) {
    const node = await readNodeResources(new CaptureLogger(), {
      hostAccess: false,
      agent: agentOn(v2)!,
      ...(single !== undefined ? { singleProcessOOMKill: single } : {}),
    });
    assert.equal(node.memoryOomGroup, grouped, `v2 ${v2}, single ${single}`);
  }
});

Deno.test("readAppArmorEnabled() reads the switch, a missing one as off, and says why it cannot", async () => {
  assert.equal(await readAppArmorEnabled(() => Promise.resolve("Y\n")), "Y\n");
  assert.equal(
    await readAppArmorEnabled(() =>
      Promise.reject(new Deno.errors.NotFound("no such file"))
    ),
    "",
  );
  const denied = await readAppArmorEnabled(() =>
    Promise.reject(new Deno.errors.PermissionDenied("read access"))
  );
  assert.ok(denied instanceof Error && /read access/.test(denied.message));
  const none = await readAppArmorEnabled({ unavailable: "no agent" });
  assert.ok(none instanceof Error && none.message === "no agent");
});
