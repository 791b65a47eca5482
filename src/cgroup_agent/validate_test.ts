import * as assert from "node:assert/strict";
import {
  type AgentRequest,
  agentScope,
  checkRequest,
  parseRequest,
} from "./validate.ts";

const v2 = agentScope({ cgroupRoot: "/h9", reservedCgroups: ["/kube"] }, "v2");
const v1 = agentScope({ cgroupRoot: "/h9" }, "v1");
const M = "/sys/fs/cgroup";

const allowed: [string, typeof v2, AgentRequest][] = [
  ["version marker", v2, { op: "exists", path: `${M}/cgroup.controllers` }],
  ["v1 hierarchies", v1, { op: "readDirNames", path: M }],
  ["root controllers", v2, {
    op: "readTextFile",
    path: `${M}/cgroup.controllers`,
  }],
  ["enable at the root", v2, {
    op: "writeTextFile",
    path: `${M}/cgroup.subtree_control`,
    text: "+cpu +memory",
  }],
  // the node's usage for /metrics/resource (cAdvisor's root container)
  ["v2 root cpu.stat", v2, { op: "readTextFile", path: `${M}/cpu.stat` }],
  ["v2 root memory.stat", v2, { op: "readTextFile", path: `${M}/memory.stat` }],
  ["v1 root cpuacct.usage", v1, {
    op: "readTextFile",
    path: `${M}/cpuacct/cpuacct.usage`,
  }],
  ["v1 root memory usage", v1, {
    op: "readTextFile",
    path: `${M}/memory/memory.usage_in_bytes`,
  }],
  // /stats/summary: the host's interface counters and the pods' cgroup's creation time
  ["host network counters", v2, { op: "readTextFile", path: "/proc/net/dev" }],
  ["v2 kubepods time", v2, { op: "modifiedMs", path: `${M}/h9/kubepods` }],
  ["reserved cgroup time", v2, { op: "modifiedMs", path: `${M}/kube` }],
  ["v1 kubepods time", v1, {
    op: "modifiedMs",
    path: `${M}/memory/h9/kubepods`,
  }],
  ["create the cgroup root", v2, { op: "mkdirs", path: `${M}/h9` }],
  ["create kubepods", v2, { op: "mkdirs", path: `${M}/h9/kubepods` }],
  ["v1 pod cgroup", v1, {
    op: "mkdirs",
    path: `${M}/memory/h9/kubepods/burstable/podx`,
  }],
  ["pod limit", v2, {
    op: "writeTextFile",
    path: `${M}/h9/kubepods/burstable/podx/memory.max`,
    text: "1000",
  }],
  ["v1 hugetlb", v1, {
    op: "writeTextFile",
    path: `${M}/hugetlb/h9/kubepods/hugetlb.2MB.limit_in_bytes`,
    text: "0",
  }],
  ["pod procs", v2, {
    op: "readTextFile",
    path: `${M}/h9/kubepods/podx/cgroup.procs`,
  }],
  ["list tiers", v2, {
    op: "readDirNames",
    path: `${M}/h9/kubepods/burstable`,
  }],
  ["remove a pod", v2, {
    op: "rmdir",
    path: `${M}/h9/kubepods/besteffort/podx`,
  }],
  ["reserved exists", v2, { op: "exists", path: `${M}/kube` }],
  ["reserved limit", v2, {
    op: "writeTextFile",
    path: `${M}/kube/memory.max`,
    text: "5",
  }],
  ["v1 cpuset inherited", v1, {
    op: "writeTextFile",
    path: `${M}/cpuset/h9/cpuset.cpus`,
    text: "0-3",
  }],
  ["v1 cpuset of the parent", v1, {
    op: "readTextFile",
    path: `${M}/cpuset/cpuset.mems`,
  }],
  ["pid_max", v2, { op: "readTextFile", path: "/proc/sys/kernel/pid_max" }],
  ["AppArmor switch", v2, {
    op: "readTextFile",
    path: "/sys/module/apparmor/parameters/enabled",
  }],
  ["hugepages", v2, {
    op: "readTextFile",
    path: "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages",
  }],
  ["hugepage sizes", v2, {
    op: "readDirNames",
    path: "/sys/kernel/mm/hugepages",
  }],
  ["kill in a pod", v2, {
    op: "kill",
    pid: 42,
    cgroup: "/h9/kubepods/burstable/podx",
  }],
  ["swap", v2, { op: "swapController" }],
];

const refused: [string, typeof v2, AgentRequest][] = [
  ["writing the AppArmor switch", v2, {
    op: "writeTextFile",
    path: "/sys/module/apparmor/parameters/enabled",
    text: "N",
  }],
  ["dot-dot escape", v2, {
    op: "writeTextFile",
    path: `${M}/h9/kubepods/../../memory.max`,
    text: "1",
  }],
  ["dot component", v2, { op: "rmdir", path: `${M}/h9/kubepods/./x` }],
  ["empty component", v2, { op: "mkdirs", path: `${M}//h9/kubepods/x` }],
  ["relative path", v2, {
    op: "readTextFile",
    path: "sys/fs/cgroup/h9/kubepods/memory.max",
  }],
  ["outside the mount", v2, { op: "readTextFile", path: "/etc/shadow" }],
  ["a sibling cgroup", v2, {
    op: "writeTextFile",
    path: `${M}/system.slice/memory.max`,
    text: "1",
  }],
  ["a prefix look-alike", v2, { op: "mkdirs", path: `${M}/h9/kubepods-evil` }],
  ["moving processes", v2, {
    op: "writeTextFile",
    path: `${M}/h9/kubepods/podx/cgroup.procs`,
    text: "1",
  }],
  ["disabling controllers", v2, {
    op: "writeTextFile",
    path: `${M}/cgroup.subtree_control`,
    text: "-memory",
  }],
  ["settings above kubepods", v2, {
    op: "writeTextFile",
    path: `${M}/h9/memory.max`,
    text: "1",
  }],
  ["reading above kubepods", v2, {
    op: "readTextFile",
    path: `${M}/h9/memory.max`,
  }],
  ["usage files of a sibling cgroup", v2, {
    op: "readTextFile",
    path: `${M}/system.slice/memory.stat`,
  }],
  ["usage files below the root, above kubepods", v1, {
    op: "readTextFile",
    path: `${M}/cpuacct/h9/cpuacct.usage`,
  }],
  ["writing a root usage file", v2, {
    op: "writeTextFile",
    path: `${M}/memory.stat`,
    text: "1",
  }],
  ["listing above kubepods", v2, { op: "readDirNames", path: `${M}/h9` }],
  ["time of a sibling cgroup", v2, {
    op: "modifiedMs",
    path: `${M}/system.slice`,
  }],
  ["time above kubepods", v1, { op: "modifiedMs", path: `${M}/memory/h9` }],
  ["other network files", v2, {
    op: "readTextFile",
    path: "/proc/net/tcp",
  }],
  ["probing siblings", v2, { op: "exists", path: `${M}/user.slice` }],
  ["removing kubepods", v2, { op: "rmdir", path: `${M}/h9/kubepods` }],
  ["removing the reserved cgroup", v2, { op: "rmdir", path: `${M}/kube` }],
  ["creating below reserved", v2, { op: "mkdirs", path: `${M}/kube/x` }],
  ["the mount itself", v2, { op: "mkdirs", path: M }],
  ["other /proc files", v2, { op: "readTextFile", path: "/proc/self/environ" }],
  ["other /sys files", v2, {
    op: "readTextFile",
    path: "/sys/kernel/mm/hugepages/hugepages-2048kB/../../../../etc/x",
  }],
  ["kill pid 1", v2, { op: "kill", pid: 1, cgroup: "/h9/kubepods/podx" }],
  ["kill outside kubepods", v2, {
    op: "kill",
    pid: 42,
    cgroup: "/system.slice",
  }],
  ["kill in kubepods itself", v2, {
    op: "kill",
    pid: 42,
    cgroup: "/h9/kubepods",
  }],
  ["kill with dot-dot", v2, {
    op: "kill",
    pid: 42,
    cgroup: "/h9/kubepods/../x",
  }],
  ["cpuset of the hierarchy root", v1, {
    op: "writeTextFile",
    path: `${M}/cpuset/cpuset.cpus`,
    text: "0",
  }],
  ["cpuset with junk", v1, {
    op: "writeTextFile",
    path: `${M}/cpuset/h9/cpuset.cpus`,
    text: "0\n1 > x",
  }],
  ["other files above kubepods", v1, {
    op: "writeTextFile",
    path: `${M}/cpuset/h9/cpuset.cpu_exclusive`,
    text: "1",
  }],
  ["huge text", v2, {
    op: "writeTextFile",
    path: `${M}/h9/kubepods/memory.max`,
    text: "1".repeat(5000),
  }],
];

Deno.test("checkRequest() allows what the kubelet's cgroup manager does", () => {
  for (const [name, scope, req] of allowed) {
    assert.equal(checkRequest(scope, req), undefined, name);
  }
});

Deno.test("checkRequest() refuses escapes and everything outside kubepods", () => {
  for (const [name, scope, req] of refused) {
    const why = checkRequest(scope, req);
    assert.match(why ?? "", /^cgroup agent refuses /, name);
  }
});

Deno.test("checkRequest() with the root cgroupRoot scopes /kubepods", () => {
  const root = agentScope({ cgroupRoot: "/" }, "v2");
  assert.deepEqual(root.kubepods, ["kubepods"]);
  assert.equal(
    checkRequest(root, { op: "mkdirs", path: `${M}/kubepods/podx` }),
    undefined,
  );
  assert.ok(checkRequest(root, { op: "mkdirs", path: `${M}/other` }));
});

Deno.test("parseRequest() names what is wrong", () => {
  assert.deepEqual(parseRequest("nope"), {
    error: "the request is not JSON (one object per line)",
  });
  assert.match(
    (parseRequest('{"op":"chmod"}') as { error: string }).error,
    /unknown op "chmod"/,
  );
  assert.match(
    (parseRequest('{"op":"writeTextFile","path":"/x"}') as { error: string })
      .error,
    /needs "path" and "text"/,
  );
  assert.deepEqual(parseRequest('{"op":"rmdir","path":"/a","extra":1}'), {
    op: "rmdir",
    path: "/a",
  });
});

const sd = agentScope({
  cgroupRoot: "/",
  cgroupDriver: "systemd",
  reservedCgroups: ["/kube.slice"],
}, "v2");
const K = "/kubepods.slice";
const BURSTABLE = `${K}/kubepods-burstable.slice`;
const POD = `${BURSTABLE}/kubepods-burstable-pod1_2.slice`;

Deno.test("checkRequest() with the systemd driver: slices of kubepods and below, limits on reserved ones", () => {
  assert.deepEqual(sd.kubepods, ["kubepods.slice"]);
  const ok: AgentRequest[] = [
    { op: "startSlice", cgroup: K },
    { op: "startSlice", cgroup: POD },
    {
      op: "setSlice",
      cgroup: K,
      resources: { cpuShares: 2048, cpuSet: "0-1" },
    },
    {
      op: "setSlice",
      cgroup: POD,
      resources: {
        cpuShares: 102,
        cpuQuota: -1,
        cpuPeriod: 100_000,
        memoryLimit: 1 << 20,
        pidsLimit: -1,
      },
    },
    { op: "setSlice", cgroup: "/kube.slice", resources: { memoryLimit: 5 } },
    { op: "stopSlice", cgroup: POD },
    // the files of the slice form go through the same table
    { op: "writeTextFile", path: `${M}${POD}/memory.max`, text: "1" },
    { op: "kill", pid: 42, cgroup: POD },
  ];
  for (const req of ok) {
    assert.equal(checkRequest(sd, req), undefined, JSON.stringify(req));
  }
  const bad: [AgentRequest, RegExp][] = [
    [
      { op: "startSlice", cgroup: "/system.slice" },
      /outside \/kubepods\.slice/,
    ],
    [{ op: "startSlice", cgroup: "/kube.slice" }, /outside/],
    [{ op: "stopSlice", cgroup: K }, /is not below \/kubepods\.slice/],
    [{ op: "stopSlice", cgroup: "/kube.slice" }, /not below/],
    [{ op: "stopSlice", cgroup: "/-.slice" }, /not a slice path/],
    [{ op: "setSlice", cgroup: "/user.slice", resources: {} }, /outside/],
    // a unit name that does not match its place, another unit type, odd characters
    [
      { op: "startSlice", cgroup: `${K}/other-pod.slice` },
      /not a slice path/,
    ],
    [{ op: "startSlice", cgroup: `${K}/kubepods-x.service` }, /slice path/],
    [{ op: "stopSlice", cgroup: `${K}/../ssh.slice` }, /slice path/],
    [{ op: "startSlice", cgroup: `${K}/kubepods-a\\x2d.slice` }, /slice path/],
    [{ op: "startSlice", cgroup: "kubepods.slice" }, /slice path/],
    [
      { op: "setSlice", cgroup: POD, resources: { memoryLimit: -2 } },
      /memoryLimit must be an integer of at least -1/,
    ],
    [
      { op: "setSlice", cgroup: POD, resources: { cpuShares: 1.5 } },
      /cpuShares must be an integer/,
    ],
    [
      { op: "setSlice", cgroup: POD, resources: { cpuSet: "0-1;x" } },
      /cpuSet must be a CPU list/,
    ],
    [
      {
        op: "setSlice",
        cgroup: POD,
        resources: { ExecStart: "/bin/sh" } as never,
      },
      /unknown resource "ExecStart"/,
    ],
  ];
  for (const [req, why] of bad) {
    assert.match(checkRequest(sd, req) ?? "", why, JSON.stringify(req));
  }
  // the cgroupfs scope serves no slices, and its kubepods is not the slice form
  assert.match(
    checkRequest(agentScope({ cgroupRoot: "/" }, "v2"), {
      op: "startSlice",
      cgroup: K,
    }) ?? "",
    /start it with --cgroup-driver=systemd/,
  );
  assert.match(
    checkRequest(sd, { op: "mkdirs", path: `${M}/kubepods/x` }) ?? "",
    /outside \/kubepods\.slice/,
  );
});

Deno.test("parseRequest() reads the slice operations", () => {
  assert.deepEqual(
    parseRequest(
      `{"op":"setSlice","cgroup":"/a.slice","resources":{"pidsLimit":5}}`,
    ),
    { op: "setSlice", cgroup: "/a.slice", resources: { pidsLimit: 5 } },
  );
  assert.match(
    (parseRequest(`{"op":"setSlice","cgroup":"/a.slice"}`) as {
      error: string;
    }).error,
    /setSlice needs "cgroup" \(a string\) and "resources"/,
  );
  assert.match(
    (parseRequest(`{"op":"stopSlice"}`) as { error: string }).error,
    /stopSlice needs "cgroup"/,
  );
});

Deno.test("parseRequest() reads shareRootDir without a path, and checkRequest() allows it", () => {
  // whatever a request adds, the agent shares only its own root dir
  const req = parseRequest('{"op":"shareRootDir","path":"/etc"}');
  assert.deepEqual(req, { op: "shareRootDir" });
  assert.equal(checkRequest(v2, req as AgentRequest), undefined);
  assert.match(
    (parseRequest('{"op":"nope"}') as { error: string }).error,
    /cleanSubPaths, shareRootDir, logind/,
  );
});

Deno.test("parseRequest() and checkRequest(): local block volumes only on a pod's local volume directory, devices only below /dev", () => {
  const uid = "8a3c3f5e-1111-4222-8333-944455556666";
  const mount = (target: unknown, m: unknown) =>
    parseRequest(JSON.stringify({ op: "mountLocalBlock", target, mount: m }));
  const good = mount({ uid, pv: "local-pv.a1" }, {
    device: "/dev/loop3",
    fsType: "",
    readOnly: false,
  });
  assert.deepEqual(good, {
    op: "mountLocalBlock",
    target: { uid, pv: "local-pv.a1" },
    mount: { device: "/dev/loop3", fsType: "", readOnly: false },
  });
  assert.equal(checkRequest(v2, good as AgentRequest), undefined);
  const refused = (target: unknown, m: unknown) =>
    checkRequest(v2, mount(target, m) as AgentRequest);
  const disk = { device: "/dev/loop3", fsType: "ext4", readOnly: true };
  assert.match(refused({ uid: "../x", pv: "p" }, disk) ?? "", /not a UID/);
  assert.match(refused({ uid, pv: ".." }, disk) ?? "", /not a DNS subdomain/);
  assert.match(refused({ uid, pv: "a/b" }, disk) ?? "", /not a DNS subdomain/);
  assert.match(
    refused({ uid, pv: "p" }, { ...disk, device: "/etc/passwd" }) ?? "",
    /not a path below \/dev/,
  );
  assert.match(
    refused({ uid, pv: "p" }, { ...disk, device: "/dev/../etc/shadow" }) ?? "",
    /"\." or "\.\." component/,
  );
  assert.match(
    refused({ uid, pv: "p" }, { ...disk, fsType: "nfs" }) ?? "",
    /fsType "nfs" is not one of ext2, ext3, ext4, xfs/,
  );
  assert.match(
    (mount({ uid, pv: "p" }, { device: "/dev/loop3" }) as { error: string })
      .error,
    /mountLocalBlock needs "mount"/,
  );
  const unmount = parseRequest(JSON.stringify({
    op: "unmountLocalBlock",
    target: { uid, pv: "p" },
    mount: disk,
  }));
  // an unmount names the directory only: nothing else of a request reaches it
  assert.deepEqual(unmount, {
    op: "unmountLocalBlock",
    target: { uid, pv: "p" },
  });
  const device = (d: string) =>
    checkRequest(
      v2,
      parseRequest(
        JSON.stringify({ op: "isBlockDevice", device: d }),
      ) as AgentRequest,
    );
  assert.equal(device("/dev/disk/by-id/x"), undefined);
  assert.match(device("/sys/block/loop0") ?? "", /not a path below \/dev/);
});
