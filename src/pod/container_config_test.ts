import assert from "node:assert/strict";
import { containerHashString } from "./container_hash.ts";
import {
  containerLogPath,
  generateContainerConfig,
  generatePodSandboxConfig,
  podLogDirectory,
} from "./container_config.ts";
import { dnsConfigForPod, parseResolvConf } from "./dns_config.ts";
import { parseQuantity } from "./linux_config.ts";
import type { Pod } from "./types.ts";

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
    containerType: "container",
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
    "io.kubernetes.container.type": "container",
    "io.kubernetes.pod.terminationGracePeriod": "30",
    "io.kubernetes.container.ports": JSON.stringify(container.ports),
  });
  assert.deepEqual(c.linux?.resources, {
    cpuShares: 256n,
    cpuPeriod: 100_000n,
    cpuQuota: 50_000n,
    memoryLimitInBytes: 134_217_728n,
  });
  assert.ok(c.linux?.securityContext?.maskedPaths?.includes("/proc/kcore"));
});

Deno.test("generateContainerConfig() mounts the termination message file when given", () => {
  const p = pod();
  const c = generateContainerConfig(p, p.spec.containers[0]!, {
    restartCount: 0,
    imageRef: "nginx",
    containerType: "init",
    nodeName: "n",
    terminationMessageHostPath:
      "/var/lib/kubelet/pods/u-1/containers/app/abcd1234",
  });
  assert.deepEqual(c.mounts, [{
    containerPath: "/dev/termination-log",
    hostPath: "/var/lib/kubelet/pods/u-1/containers/app/abcd1234",
  }]);
  assert.equal(c.annotations?.["io.kubernetes.container.type"], "init");
});

Deno.test("parseQuantity() understands decimal and binary suffixes", () => {
  assert.equal(parseQuantity("100m"), 0.1);
  assert.equal(parseQuantity("2"), 2);
  assert.equal(parseQuantity("1Ki"), 1024);
  assert.equal(parseQuantity("1G"), 1e9);
  assert.throws(
    () => parseQuantity("12 apples"),
    /Invalid quantity "12 apples"/,
  );
});

Deno.test("dnsConfigForPod() uses the host resolv.conf without cluster DNS", () => {
  const host = parseResolvConf(
    "# c\nnameserver 1.1.1.1\nnameserver 8.8.8.8\nsearch a.local b.local\noptions ndots:2 edns0\n",
  );
  assert.deepEqual(host, {
    servers: ["1.1.1.1", "8.8.8.8"],
    searches: ["a.local", "b.local"],
    options: ["ndots:2", "edns0"],
  });
  assert.deepEqual(dnsConfigForPod(pod(), { host }), host);
});

Deno.test("dnsConfigForPod() builds the cluster search path for ClusterFirst", () => {
  const got = dnsConfigForPod(pod(), {
    clusterDNS: ["10.96.0.10"],
    clusterDomain: "cluster.local",
  });
  assert.deepEqual(got, {
    servers: ["10.96.0.10"],
    searches: ["prod.svc.cluster.local", "svc.cluster.local", "cluster.local"],
    options: ["ndots:5"],
  });
});

Deno.test("dnsConfigForPod() honours policy None with spec.dnsConfig", () => {
  const p = pod({
    dnsPolicy: "None",
    dnsConfig: {
      nameservers: ["9.9.9.9"],
      options: [{ name: "ndots", value: "1" }],
    },
  });
  assert.deepEqual(dnsConfigForPod(p, { clusterDNS: ["10.96.0.10"] }), {
    servers: ["9.9.9.9"],
    searches: [],
    options: ["ndots:1"],
  });
});
