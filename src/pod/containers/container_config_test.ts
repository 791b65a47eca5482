import assert from "node:assert/strict";
import { containerHashString } from "./container_hash.ts";
import {
  containerLogPath,
  generateContainerConfig,
  generatePodSandboxConfig,
  podLogDirectory,
} from "./container_config.ts";
import type { Pod } from "../types.ts";

function pod(over: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: {
      name: "web",
      namespace: "prod",
      uid: "u-1",
      labels: { app: "web" },
      annotations: { "kubernetes.io/config.source": "file" },
    },
    spec: {
      terminationGracePeriodSeconds: 30,
      containers: [{
        name: "app",
        image: "nginx:1.27",
        command: ["/bin/sh", "-c"],
        args: ["echo $(GREETING) $$(HOME)"],
        env: [{ name: "GREETING", value: "hello" }],
        workingDir: "/srv",
        ports: [{ containerPort: 80, hostPort: 8080 }, {
          containerPort: 53,
          protocol: "UDP",
        }],
        resources: {
          limits: { cpu: "500m", memory: "128Mi" },
          requests: { cpu: "250m" },
        },
      }],
      ...over,
    },
  };
}

Deno.test("podLogDirectory() and containerLogPath() follow the kubelet layout", () => {
  assert.equal(
    podLogDirectory("/var/log/pods", pod()),
    "/var/log/pods/prod_web_u-1",
  );
  assert.equal(podLogDirectory("/tmp/logs/", pod()), "/tmp/logs/prod_web_u-1");
  assert.equal(containerLogPath("app", 3), "app/3.log");
});

Deno.test("generatePodSandboxConfig() sets metadata, labels, annotations, ports and log dir", () => {
  const c = generatePodSandboxConfig(pod(), {
    podLogsDir: "/var/log/pods",
    attempt: 2,
  });
  assert.deepEqual(c.metadata, {
    name: "web",
    namespace: "prod",
    uid: "u-1",
    attempt: 2,
  });
  assert.equal(c.hostname, "web");
  assert.equal(c.logDirectory, "/var/log/pods/prod_web_u-1");
  assert.deepEqual(c.labels, {
    app: "web",
    "io.kubernetes.pod.name": "web",
    "io.kubernetes.pod.namespace": "prod",
    "io.kubernetes.pod.uid": "u-1",
  });
  assert.deepEqual(c.annotations, { "kubernetes.io/config.source": "file" });
  assert.deepEqual(c.portMappings, [
    { protocol: 0, containerPort: 80, hostPort: 8080, hostIp: "" },
    { protocol: 1, containerPort: 53, hostPort: 0, hostIp: "" },
  ]);
  assert.deepEqual(c.linux?.securityContext?.namespaceOptions, {
    usernsOptions: { mode: 2 },
    network: 0,
    pid: 1,
    ipc: 0,
  });
  assert.equal(c.dnsConfig, undefined);
});

Deno.test("generatePodSandboxConfig() leaves the hostname empty for host-network pods", () => {
  const c = generatePodSandboxConfig(pod({ hostNetwork: true }), {
    podLogsDir: "/l",
    attempt: 0,
  });
  assert.equal(c.hostname, "");
  assert.equal(c.linux?.securityContext?.namespaceOptions?.network, 2);
});

Deno.test("generatePodSandboxConfig() uses spec.hostname and trims long names", () => {
  const named = generatePodSandboxConfig(pod({ hostname: "db-0" }), {
    podLogsDir: "/l",
    attempt: 0,
  });
  assert.equal(named.hostname, "db-0");
  const long = pod();
  long.metadata.name = `${"a".repeat(62)}-b`;
  assert.equal(
    generatePodSandboxConfig(long, { podLogsDir: "/l", attempt: 0 }).hostname,
    "a".repeat(62),
  );
});

Deno.test("generateContainerConfig() builds the CRI container config", () => {
  const p = pod();
  const container = p.spec.containers[0]!;
  const c = generateContainerConfig(p, container, {
    restartCount: 2,
    imageRef: "sha256:abc",
    nodeName: "node-a",
    podIP: "10.0.0.9",
  });
  assert.deepEqual(c.metadata, { name: "app", attempt: 2 });
  assert.deepEqual(c.image, {
    image: "sha256:abc",
    userSpecifiedImage: "nginx:1.27",
  });
  assert.deepEqual(c.command, ["/bin/sh", "-c"]);
  assert.deepEqual(c.args, ["echo hello $(HOME)"]);
  assert.equal(c.workingDir, "/srv");
  assert.deepEqual(c.envs, [{ key: "GREETING", value: "hello" }]);
  assert.equal(c.logPath, "app/2.log");
  assert.deepEqual(c.labels, {
    "io.kubernetes.pod.name": "web",
    "io.kubernetes.pod.namespace": "prod",
    "io.kubernetes.pod.uid": "u-1",
    "io.kubernetes.container.name": "app",
  });
  assert.deepEqual(c.annotations, {
    "io.kubernetes.container.hash": containerHashString(container),
    "io.kubernetes.container.restartCount": "2",
    "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
    "io.kubernetes.container.terminationMessagePolicy": "File",
    "io.kubernetes.pod.terminationGracePeriod": "30",
    "io.kubernetes.container.ports": JSON.stringify(container.ports),
  });
  // Burstable without a memory request: OOM score 999; no node facts, no hugepage sizes
  assert.deepEqual(c.linux?.resources, {
    cpuShares: 256n,
    cpuPeriod: 100_000n,
    cpuQuota: 50_000n,
    memoryLimitInBytes: 134_217_728n,
    oomScoreAdj: 999n,
    hugepageLimits: [],
  });
  assert.ok(c.linux?.securityContext?.maskedPaths?.includes("/proc/kcore"));
});

Deno.test("generateContainerConfig() mounts the termination message file when given", () => {
  const p = pod();
  const c = generateContainerConfig(p, p.spec.containers[0]!, {
    restartCount: 0,
    imageRef: "nginx",
    nodeName: "n",
    terminationMessageHostPath:
      "/var/lib/kubelet/pods/u-1/containers/app/abcd1234",
  });
  assert.deepEqual(c.mounts, [{
    containerPath: "/dev/termination-log",
    hostPath: "/var/lib/kubelet/pods/u-1/containers/app/abcd1234",
  }]);
  assert.equal(c.annotations?.["io.kubernetes.container.type"], undefined);
});

Deno.test("generateContainerConfig() mounts the managed hosts file first, unless a volume takes /etc/hosts", () => {
  const p = pod();
  const options = {
    restartCount: 0,
    imageRef: "nginx",
    nodeName: "n",
    hostsFileHostPath: "/var/lib/kubelet/pods/u-1/etc-hosts",
    terminationMessageHostPath: "/var/lib/kubelet/pods/u-1/containers/app/ab",
  };
  const c = generateContainerConfig(p, p.spec.containers[0]!, options);
  assert.deepEqual(c.mounts?.map((m) => m.containerPath), [
    "/etc/hosts",
    "/dev/termination-log",
  ]);
  const own = {
    ...p.spec.containers[0]!,
    volumeMounts: [{ name: "h", mountPath: "/etc/hosts" }],
  };
  assert.deepEqual(
    generateContainerConfig(p, own, options).mounts?.map((m) =>
      m.containerPath
    ),
    ["/dev/termination-log"],
  );
});

Deno.test("generateContainerConfig() runs as the image's user unless the pod sets one", () => {
  const p = pod();
  const base = { restartCount: 0, imageRef: "nginx", nodeName: "n" };
  const root = generateContainerConfig(p, p.spec.containers[0]!, {
    ...base,
    imageUser: { uid: 0n },
  });
  assert.deepEqual(root.linux?.securityContext?.runAsUser, { value: 0n });
  const named = generateContainerConfig(p, p.spec.containers[0]!, {
    ...base,
    imageUser: { username: "www" },
  });
  assert.equal(named.linux?.securityContext?.runAsUser, undefined);
  assert.equal(named.linux?.securityContext?.runAsUsername, "www");
  const set = pod({ securityContext: { runAsUser: 1000 } });
  assert.deepEqual(
    generateContainerConfig(set, set.spec.containers[0]!, {
      ...base,
      imageUser: { uid: 0n },
    }).linux?.securityContext?.runAsUser,
    { value: 1000n },
  );
});

Deno.test("generatePodSandboxConfig() sends the pod cgroup, resources, overhead and DNS", () => {
  const c = generatePodSandboxConfig(pod(), {
    podLogsDir: "/l",
    attempt: 0,
    cgroups: { cgroupRoot: "/node-a" },
    dns: { host: { servers: ["10.0.0.53"], searches: [], options: [] } },
  });
  assert.equal(c.linux?.cgroupParent, "/node-a/kubepods/burstable/podu-1");
  assert.deepEqual(c.linux?.resources, {
    cpuShares: 256n,
    cpuPeriod: 100_000n,
    cpuQuota: 50_000n,
    memoryLimitInBytes: 134_217_728n,
  });
  assert.deepEqual(c.linux?.overhead, {});
  assert.deepEqual(c.dnsConfig, {
    servers: ["10.0.0.53"],
    searches: [],
    options: [],
  });
});

Deno.test("generateContainerConfig() refuses root under runAsNonRoot as upstream verifyRunAsNonRoot", () => {
  const base = { restartCount: 0, imageRef: "nginx", nodeName: "n" };
  const strict = pod({ securityContext: { runAsNonRoot: true } });
  const app = strict.spec.containers[0]!;
  assert.throws(
    () =>
      generateContainerConfig(strict, app, { ...base, imageUser: { uid: 0n } }),
    {
      name: "RunAsNonRootError",
      message:
        'container has runAsNonRoot and image will run as root (pod: "web_prod(u-1)", container: app)',
    },
  );
  assert.throws(
    () =>
      generateContainerConfig(strict, app, {
        ...base,
        imageUser: { username: "www" },
      }),
    /image has non-numeric user \(www\), cannot verify user is non-root/,
  );
  const zero = pod({ securityContext: { runAsNonRoot: true, runAsUser: 0 } });
  assert.throws(
    () =>
      generateContainerConfig(zero, zero.spec.containers[0]!, {
        ...base,
        imageUser: { uid: 1000n },
      }),
    /container's runAsUser breaks non-root policy/,
  );
  assert.deepEqual(
    generateContainerConfig(strict, app, { ...base, imageUser: { uid: 1000n } })
      .linux
      ?.securityContext?.runAsUser,
    { value: 1000n },
  );
  // the container's own setting wins over the pod's
  const relaxed = { ...app, securityContext: { runAsNonRoot: false } };
  assert.doesNotThrow(() =>
    generateContainerConfig(strict, relaxed, {
      ...base,
      imageUser: { uid: 0n },
    })
  );
});

Deno.test("generatePodSandboxConfig() survives a bad quantity; the container config names it", () => {
  const bad = pod();
  bad.spec.containers[0]!.resources = { limits: { cpu: "lots" } };
  const c = generatePodSandboxConfig(bad, {
    podLogsDir: "/l",
    attempt: 0,
    cgroups: {},
  });
  assert.equal(c.linux?.cgroupParent, "");
  assert.deepEqual(c.linux?.resources, {});
  assert.throws(
    () =>
      generateContainerConfig(bad, bad.spec.containers[0]!, {
        restartCount: 0,
        imageRef: "nginx",
        nodeName: "n",
      }),
    /quantities must match the regular expression/,
  );
});

Deno.test("generatePodSandboxConfig() drops a port repeated within one container, as upstream, but not across containers", () => {
  const app = pod().spec.containers[0]!;
  const c = generatePodSandboxConfig(
    pod({
      containers: [
        {
          ...app,
          ports: [
            { containerPort: 80, hostPort: 8080 },
            { containerPort: 80, hostPort: 8080, protocol: "TCP" },
            { name: "dns", containerPort: 53, protocol: "UDP" },
            { name: "dns", containerPort: 54, protocol: "UDP" },
            { containerPort: 80, hostPort: 8080, hostIP: "::1" },
            { containerPort: 80, hostPort: 8080, hostIP: "127.0.0.1" },
          ],
        },
        {
          ...app,
          name: "side",
          ports: [{ containerPort: 80, hostPort: 8080 }],
        },
      ],
    }),
    { podLogsDir: "/var/log/pods", attempt: 0 },
  );
  assert.deepEqual(c.portMappings, [
    { protocol: 0, containerPort: 80, hostPort: 8080, hostIp: "" },
    { protocol: 1, containerPort: 53, hostPort: 0, hostIp: "" },
    { protocol: 0, containerPort: 80, hostPort: 8080, hostIp: "::1" },
    { protocol: 0, containerPort: 80, hostPort: 8080, hostIp: "127.0.0.1" },
    { protocol: 0, containerPort: 80, hostPort: 8080, hostIp: "" },
  ]);
});

Deno.test("generateContainerConfig() puts the device plugins' envs, mounts, devices and annotations in, the container's own winning", () => {
  const p = pod();
  const c = generateContainerConfig(p, p.spec.containers[0]!, {
    restartCount: 0,
    imageRef: "nginx",
    nodeName: "n",
    volumeMounts: [{ containerPath: "/data", hostPath: "/v/data" }],
    devices: {
      envs: [{ key: "GREETING", value: "from-device" }, {
        key: "DEV",
        value: "d1",
      }],
      mounts: [{
        containerPath: "/tmp/d1",
        hostPath: "/tmp/d1",
        readonly: true,
      }],
      devices: [{
        containerPath: "/dev/fake0",
        hostPath: "/dev/null",
        permissions: "rw",
      }],
      annotations: {
        "example.com/device": "d1",
        "io.kubernetes.container.restartCount": "99",
      },
      cdiDevices: [{ name: "example.com/resource=CDI-d1" }],
    },
  });
  assert.deepEqual(c.CDIDevices, [{ name: "example.com/resource=CDI-d1" }]);
  // device envs come first; the runtime keeps the last value of a name
  assert.deepEqual(c.envs?.slice(0, 2), [
    { key: "GREETING", value: "from-device" },
    { key: "DEV", value: "d1" },
  ]);
  assert.deepEqual(c.envs?.find((e, i) => i > 1 && e.key === "GREETING"), {
    key: "GREETING",
    value: "hello",
  });
  assert.deepEqual(c.mounts, [
    { containerPath: "/tmp/d1", hostPath: "/tmp/d1", readonly: true },
    { containerPath: "/data", hostPath: "/v/data" },
  ]);
  assert.deepEqual(c.devices, [{
    containerPath: "/dev/fake0",
    hostPath: "/dev/null",
    permissions: "rw",
  }]);
  assert.equal(c.annotations?.["example.com/device"], "d1");
  assert.equal(c.annotations?.["io.kubernetes.container.restartCount"], "0");
});

Deno.test("generateContainerConfig() appends raw block volumes after the device plugins' devices", () => {
  const p = pod();
  const block = {
    containerPath: "/mnt/volume1",
    hostPath: "/dev/loop3",
    permissions: "mrw",
  };
  const plugin = {
    containerPath: "/dev/fake0",
    hostPath: "/dev/null",
    permissions: "rw",
  };
  const alone = generateContainerConfig(p, p.spec.containers[0]!, {
    restartCount: 0,
    imageRef: "nginx",
    nodeName: "n",
    volumeDevices: [block],
  });
  assert.deepEqual(alone.devices, [block]);
  const both = generateContainerConfig(p, p.spec.containers[0]!, {
    restartCount: 0,
    imageRef: "nginx",
    nodeName: "n",
    volumeDevices: [block],
    devices: { envs: [], mounts: [], devices: [plugin], annotations: {} },
  });
  assert.deepEqual(both.devices, [plugin, block]);
});

Deno.test("a pod's own user namespace: in the sandbox and container configs, and on every mount", () => {
  const m = { hostId: 196608, containerId: 0, length: 65536 };
  const userNamespace = { mode: 0, uids: [m], gids: [m] };
  const sandbox = generatePodSandboxConfig(pod(), {
    podLogsDir: "/l",
    attempt: 0,
    userNamespace,
  });
  assert.deepEqual(
    sandbox.linux?.securityContext?.namespaceOptions?.usernsOptions,
    userNamespace,
  );
  const c = generateContainerConfig(
    pod(),
    pod().spec.containers[0]!,
    {
      restartCount: 0,
      imageRef: "sha256:abc",
      nodeName: "n",
      userNamespace,
      volumeMounts: [{
        containerPath: "/data",
        hostPath: "/var/lib/kubelet/pods/u-1/volumes/x",
      }],
      hostsFileHostPath: "/var/lib/kubelet/pods/u-1/etc-hosts",
      terminationMessageHostPath: "/var/lib/kubelet/pods/u-1/containers/app/t",
    },
  );
  assert.deepEqual(
    c.linux?.securityContext?.namespaceOptions?.usernsOptions,
    userNamespace,
  );
  assert.equal(c.mounts?.length, 3);
  for (const mount of c.mounts ?? []) {
    assert.deepEqual(mount.uidMappings, [m], mount.containerPath);
    assert.deepEqual(mount.gidMappings, [m], mount.containerPath);
  }
});

Deno.test("the node's user namespace: mode NODE and plain mounts; none at all with the gate off", () => {
  const c = generateContainerConfig(pod(), pod().spec.containers[0]!, {
    restartCount: 0,
    imageRef: "sha256:abc",
    nodeName: "n",
    volumeMounts: [{ containerPath: "/data", hostPath: "/x" }],
  });
  assert.deepEqual(c.linux?.securityContext?.namespaceOptions?.usernsOptions, {
    mode: 2,
  });
  assert.equal(c.mounts?.[0]?.uidMappings, undefined);
  const off = generatePodSandboxConfig(pod(), {
    podLogsDir: "/l",
    attempt: 0,
    userNamespace: null,
  });
  assert.equal(
    "usernsOptions" in (off.linux?.securityContext?.namespaceOptions ?? {}),
    false,
  );
  const offContainer = generateContainerConfig(
    pod(),
    pod().spec.containers[0]!,
    {
      restartCount: 0,
      imageRef: "sha256:abc",
      nodeName: "n",
      userNamespace: null,
    },
  );
  assert.equal(
    "usernsOptions" in
      (offContainer.linux?.securityContext?.namespaceOptions ?? {}),
    false,
  );
});
