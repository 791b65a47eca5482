import assert from "node:assert/strict";
import { cgroupAgentClient } from "../cgroup_agent/mod.ts";
import { withAgent } from "../cgroup_agent/testing.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import {
  createNodeFacts,
  type HostProbe,
  normalizeRuntimeVersion,
  osImage,
  readHugepagesFrom,
  resolveNodeIPs,
  thresholdBytes,
} from "./node_host_facts.ts";

const IFACES = [
  { address: "127.0.0.1", family: "IPv4", name: "lo" },
  { address: "169.254.3.4", family: "IPv4", name: "eth1" },
  { address: "192.0.2.2", family: "IPv4", name: "eth0" },
  { address: "fd00::2", family: "IPv6", name: "eth0" },
];

Deno.test("resolveNodeIPs() takes --node-ip values that are local and not loopback", () => {
  assert.deepEqual(resolveNodeIPs("192.0.2.2,fd00::2", IFACES), {
    ips: ["192.0.2.2", "fd00::2"],
    errors: [],
  });
  assert.deepEqual(resolveNodeIPs("127.0.0.1", IFACES), {
    ips: [],
    errors: ["nodeIP can't be loopback address"],
  });
  assert.deepEqual(resolveNodeIPs("198.51.100.1", IFACES).errors, [
    `node IP: "198.51.100.1" not found in the host's network interfaces`,
  ]);
});

Deno.test("resolveNodeIPs() without --node-ip picks the first routable IPv4 interface address", () => {
  assert.deepEqual(resolveNodeIPs("", IFACES).ips, ["192.0.2.2"]);
  assert.deepEqual(resolveNodeIPs("0.0.0.0", IFACES).ips, ["192.0.2.2"]);
  assert.deepEqual(resolveNodeIPs(undefined, IFACES.slice(0, 2)).ips, []);
});

Deno.test("normalizeRuntimeVersion() prints versions as upstream's containerRuntimeVersion", () => {
  assert.equal(normalizeRuntimeVersion("1.6.20~ds1"), "1.6.20");
  assert.equal(normalizeRuntimeVersion("v1.7.0"), "1.7.0");
  assert.equal(normalizeRuntimeVersion("2.0.0-rc.1+abc"), "2.0.0-rc.1+abc");
  assert.equal(normalizeRuntimeVersion("1.29"), "1.29");
  assert.equal(normalizeRuntimeVersion("devel"), "devel");
});

Deno.test("osImage() reads PRETTY_NAME, defaulting to Linux", () => {
  assert.equal(
    osImage(`NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n`),
    "Debian GNU/Linux 12 (bookworm)",
  );
  assert.equal(osImage(undefined), "Linux");
});

Deno.test("thresholdBytes() reads quantities and percentages of capacity", () => {
  assert.equal(thresholdBytes("100Mi", 0), 100 * 2 ** 20);
  assert.equal(thresholdBytes("10%", 1000), 100);
  // float32 percentage, truncated: the upstream kubelet's allocatable
  // ephemeral-storage on this test machine (capacity 264212084Ki, 1 % reserved).
  assert.equal(
    264212084 * 1024 - thresholdBytes("1%", 264212084 * 1024),
    267847642337,
  );
  assert.equal(thresholdBytes(undefined, 1000), 0);
});

Deno.test("createNodeFacts() gathers host facts once and runtime readiness every round", async () => {
  const host: HostProbe = {
    readTextFile: (path) =>
      path === "/etc/machine-id"
        ? Promise.resolve("abc\n")
        : Promise.reject(new Deno.errors.PermissionDenied(path)),
    networkInterfaces: () => IFACES,
    memoryBytes: () => 2 ** 30,
    cpuCores: () => 2,
    kernelVersion: () => "6.1.0",
    filesystemBytes: () => Promise.resolve(10 * 2 ** 30),
    hugepages: () => {
      hugepageReads++;
      return Promise.resolve([{ pageBytes: 2 * 2 ** 20, pages: 0 }]);
    },
  };
  let hugepageReads = 0;
  let statusCalls = 0;
  let fail = false;
  const clock = new FakeClock(0);
  const facts = createNodeFacts({
    runtime: {
      version: () =>
        Promise.resolve({ runtimeName: "containerd", runtimeVersion: "1.7.0" }),
      status: () => {
        statusCalls++;
        return fail
          ? Promise.reject(new Error("unavailable"))
          : Promise.resolve({
            conditions: [
              { type: "RuntimeReady", status: true, reason: "", message: "" },
            ],
            handlers: [],
          });
      },
    },
    clock,
    logger: new CaptureLogger(),
    host,
  }, {
    hostname: "node-a",
    rootDir: "/var/lib/kubelet",
    maxPods: 110,
    kubeletPort: 10250,
    kubeletVersion: "v1.34.0",
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
  });
  const signal = new AbortController().signal;
  const f = await facts(signal);
  assert.equal(f.nodeInfo.machineID, "abc");
  assert.deepEqual(f.hugepages, [{ pageBytes: 2 * 2 ** 20, pages: 0 }]);
  assert.equal(f.nodeInfo.bootID, "");
  assert.equal(f.nodeInfo.systemUUID, "abc");
  assert.equal(f.nodeInfo.osImage, "Linux");
  assert.equal(f.containerRuntimeVersion, "containerd://1.7.0");
  assert.deepEqual(f.nodeIPs, ["192.0.2.2"]);
  assert.equal(f.reserved?.memoryBytes, 100 * 2 ** 20);
  // 10 % as a float32 is a little over 10 %.
  assert.equal(f.reserved?.ephemeralStorageBytes, 1073741840);
  assert.equal(f.runtimeDown, false);
  // the handlers of a ready runtime's answer (none here), no features
  assert.deepEqual(f.runtimeHandlers, []);
  assert.equal(f.runtimeFeatures, undefined);
  fail = true;
  await clock.advance(31_000);
  const later = await facts(signal);
  assert.equal(statusCalls, 2);
  assert.equal(later.runtimeDown, true);
  // the machine's huge page sizes are read once
  assert.equal(hugepageReads, 1);
});

Deno.test("readHugepagesFrom() reads the pools through the cgroup agent", async () => {
  await withAgent(async (root, socket) => {
    await Deno.mkdir(`${root}/sys/kernel/mm/hugepages/hugepages-1048576kB`);
    await Deno.writeTextFile(
      `${root}/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages`,
      "2\n",
    );
    const client = cgroupAgentClient(socket);
    try {
      assert.deepEqual(await readHugepagesFrom(client.fs), [
        { pageBytes: 2 * 2 ** 20, pages: 0 },
        { pageBytes: 2 ** 30, pages: 2 },
      ]);
    } finally {
      client.close();
    }
  });
});

Deno.test("createNodeFacts() keeps the runtime handlers and features of a ready runtime's answer only", async () => {
  const ready = (status: boolean) => ({
    type: "RuntimeReady",
    status,
    reason: "",
    message: "",
  });
  const answers = [
    {
      conditions: [ready(true)],
      handlers: [{
        name: "runc",
        recursiveReadOnlyMounts: true,
        userNamespaces: true,
      }],
      features: { supplementalGroupsPolicy: true },
    },
    { conditions: [ready(false)], handlers: [] },
  ];
  const facts = createNodeFacts({
    runtime: {
      version: () =>
        Promise.resolve({ runtimeName: "containerd", runtimeVersion: "2.4.2" }),
      status: () => Promise.resolve(answers.shift()!),
    },
    clock: new FakeClock(0),
    logger: new CaptureLogger(),
    host: {
      readTextFile: (path) =>
        Promise.reject(new Deno.errors.PermissionDenied(path)),
      networkInterfaces: () => IFACES,
      memoryBytes: () => 2 ** 30,
      cpuCores: () => 2,
      kernelVersion: () => "6.1.0",
      filesystemBytes: () => Promise.resolve(10 * 2 ** 30),
    },
  }, {
    hostname: "node-a",
    rootDir: "/var/lib/kubelet",
    maxPods: 110,
    kubeletPort: 10250,
    kubeletVersion: "v1.34.0",
  });
  const signal = new AbortController().signal;
  const want = {
    runtimeHandlers: [{
      name: "runc",
      recursiveReadOnlyMounts: true,
      userNamespaces: true,
    }],
    runtimeFeatures: { supplementalGroupsPolicy: true },
  };
  const first = await facts(signal);
  assert.deepEqual(
    {
      runtimeHandlers: first.runtimeHandlers,
      runtimeFeatures: first.runtimeFeatures,
    },
    want,
  );
  // a not-ready answer leaves them as they were
  const second = await facts(signal);
  assert.deepEqual(
    {
      runtimeHandlers: second.runtimeHandlers,
      runtimeFeatures: second.runtimeFeatures,
    },
    want,
  );
});
