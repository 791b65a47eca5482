import assert from "node:assert/strict";
import { CaptureLogger } from "../../log/testing.ts";
import {
  applyCgroup,
  type CgroupTreeFs,
  denoCgroupTreeFs,
  listPodCgroups,
  openCgroupTree,
  removeCgroup,
} from "./cgroup_tree.ts";
import {
  createPodCgroupManager,
  openPodCgroupManager,
  QOS_UPDATE_PERIOD_MS,
} from "./pod_cgroup_manager.ts";
import { RecordingCgroupSlices } from "../testing.ts";
import type { Pod, ResourceRequirements } from "../types.ts";

const GiB = 1024 ** 3;

function pod(uid: string, resources?: ResourceRequirements): Pod {
  return {
    metadata: { name: uid, namespace: "default", uid },
    spec: {
      containers: [{ name: "c", ...(resources ? { resources } : {}) }],
    },
  };
}

async function read(path: string): Promise<string | undefined> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch {
    return undefined;
  }
}

/**
 * The host file system where a new directory gets the `cgroup.controllers` its parent's
 * `cgroup.subtree_control` enables, as the kernel does on cgroup v2.
 */
function v2Kernel(): CgroupTreeFs {
  return {
    ...denoCgroupTreeFs,
    async mkdirs(path) {
      const parent = path.slice(0, path.lastIndexOf("/"));
      await Deno.mkdir(path, { recursive: true });
      const enabled = (await read(`${parent}/cgroup.subtree_control`) ?? "")
        .split(/\s+/).filter((c) => c.startsWith("+")).map((c) => c.slice(1));
      await Deno.writeTextFile(`${path}/cgroup.controllers`, enabled.join(" "));
    },
  };
}

Deno.test("applyCgroup() on cgroup v2 enables the controllers down the tree and writes v2 files", async () => {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgv2-" });
  try {
    await Deno.writeTextFile(
      `${mount}/cgroup.controllers`,
      "cpuset cpu io memory hugetlb pids",
    );
    const tree = await openCgroupTree(v2Kernel(), mount, ["2MB"]);
    assert.equal(tree.version, "v2");
    await applyCgroup(tree, "/r/kubepods/burstable/pod1", {
      cpuShares: 512,
      cpuPeriod: 100_000,
      cpuQuota: 20_000,
      memoryLimit: 1 * GiB,
      hugepageLimits: { "2MB": 0 },
    });
    const pod = `${mount}/r/kubepods/burstable/pod1`;
    assert.equal(await read(`${pod}/cpu.weight`), "20");
    assert.equal(await read(`${pod}/cpu.max`), "20000 100000");
    assert.equal(await read(`${pod}/memory.max`), String(GiB));
    assert.equal(await read(`${pod}/hugetlb.2MB.max`), "0");
    for (const dir of ["", "/r", "/r/kubepods", "/r/kubepods/burstable"]) {
      assert.equal(
        await read(`${mount}${dir}/cgroup.subtree_control`),
        "+cpuset +cpu +io +memory +hugetlb +pids",
        dir,
      );
    }
    assert.deepEqual(
      await listPodCgroups(tree, ["/r/kubepods", "/r/kubepods/burstable"]),
      new Map([["1", "/r/kubepods/burstable/pod1"]]),
    );
    // the files a real kernel would drop with the directory
    for await (const e of Deno.readDir(pod)) {
      await Deno.remove(`${pod}/${e.name}`);
    }
    await removeCgroup(tree, "/r/kubepods/burstable/pod1");
    assert.equal(await read(`${pod}/cpu.max`), undefined);
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("applyCgroup() limits hugepage reservations like the pages, and skips them on a kernel without them", async () => {
  for (const rsvd of [true, false]) {
    const mount = await Deno.makeTempDir({ prefix: "kts-cgv2-" });
    try {
      await Deno.writeTextFile(`${mount}/cgroup.controllers`, "hugetlb");
      const kernel = v2Kernel();
      const fs: CgroupTreeFs = {
        ...kernel,
        // before Linux 5.7 there are no reservation files
        writeTextFile: (path, text) =>
          !rsvd && path.includes(".rsvd.")
            ? Promise.reject(new Deno.errors.NotFound(path))
            : kernel.writeTextFile(path, text),
      };
      const tree = await openCgroupTree(fs, mount, ["2MB"]);
      const done = await applyCgroup(tree, "/kubepods/pod1", {
        hugepageLimits: { "2MB": 4 * 2 ** 20 },
      });
      const pod = `${mount}/kubepods/pod1`;
      assert.equal(await read(`${pod}/hugetlb.2MB.max`), "4194304");
      assert.equal(
        await read(`${pod}/hugetlb.2MB.rsvd.max`),
        rsvd ? "4194304" : undefined,
      );
      assert.deepEqual(
        done.map((w) => w.file),
        rsvd
          ? ["hugetlb.2MB.max", "hugetlb.2MB.rsvd.max"]
          : ["hugetlb.2MB.max"],
      );
    } finally {
      await Deno.remove(mount, { recursive: true });
    }
  }
});

/**
 * The host file system where removing a cgroup directory drops its interface files, as
 * rmdir does on cgroupfs; one with subdirectories stays.
 */
const kernelRmdir: CgroupTreeFs = {
  ...denoCgroupTreeFs,
  async rmdir(path) {
    if ((await denoCgroupTreeFs.readDirNames(path)).length) {
      throw new Deno.errors.Busy(`${path} has children`);
    }
    await Deno.stat(path);
    await Deno.remove(path, { recursive: true });
  },
};

/** A cgroup v1 layout in a temporary directory (no hugetlb hierarchy, as on this host). */
async function v1Mount(): Promise<string> {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgv1-" });
  for (const h of ["cpu", "memory", "pids"]) await Deno.mkdir(`${mount}/${h}`);
  return mount;
}

Deno.test("the pod cgroup manager enforces allocatable on kubepods and keeps the tiers in step", async () => {
  const mount = await v1Mount();
  try {
    const tree = await openCgroupTree(kernelRmdir, mount, ["2MB"]);
    assert.deepEqual([tree.version, tree.hugetlbSizes], ["v1", []]);
    const events: string[] = [];
    const killed: number[] = [];
    let now = 0;
    const manager = createPodCgroupManager({
      tree,
      logger: new CaptureLogger(),
      clock: { now: () => now },
      events: {
        event: (o, type, reason, message) =>
          events.push(`${o.kind}/${o.name} ${type} ${reason}: ${message}`),
      },
      podVolumesExist: (uid) => Promise.resolve(uid === "vol"),
      kill(pid) {
        if (pid === 7) throw new Deno.errors.NotFound("gone already");
        killed.push(pid);
      },
    }, {
      nodeName: "n1",
      cgroups: { cgroupRoot: "/h5" },
      capacity: { cpuMillis: 2000, memoryBytes: 8 * GiB, pids: 4096 },
      allocatable: {
        kubeReserved: { memory: "1Gi", cpu: "500m" },
        systemReserved: { memory: "512Mi" },
      },
      hugepageSizes: [],
      podPidsLimit: 64,
    });
    const burstable = pod("b1", { requests: { cpu: "300m" } });
    await manager.ensurePod(burstable);
    const k = "/h5/kubepods";
    assert.equal(
      await read(`${mount}/memory${k}/memory.limit_in_bytes`),
      String(6.5 * GiB),
    );
    assert.equal(await read(`${mount}/cpu${k}/cpu.shares`), "1536");
    assert.equal(await read(`${mount}/pids${k}/pids.max`), "4096");
    assert.deepEqual(events, [
      "Node/n1 Normal NodeAllocatableEnforced: Updated Node Allocatable limit across pods",
    ]);
    assert.equal(await read(`${mount}/cpu${k}/burstable/cpu.shares`), "307");
    assert.equal(await read(`${mount}/cpu${k}/besteffort/cpu.shares`), "2");
    assert.equal(
      await read(`${mount}/cpu${k}/burstable/podb1/cpu.shares`),
      "307",
    );
    assert.equal(
      await read(`${mount}/pids${k}/burstable/podb1/pids.max`),
      "64",
    );
    const second = pod("b2", { requests: { cpu: "700m" } });
    await manager.ensurePod(second);
    assert.equal(await read(`${mount}/cpu${k}/burstable/cpu.shares`), "1024");
    await manager.removePod(second);
    assert.equal(await read(`${mount}/cpu${k}/burstable/cpu.shares`), "307");
    assert.equal(
      await read(`${mount}/cpu${k}/burstable/podb2/cpu.shares`),
      undefined,
    );
    // housekeeping: an unknown pod's cgroup goes (a container's left inside first); the known
    // one stays; an unknown one whose volumes remain drops to the minimum shares and stays
    await Deno.mkdir(`${mount}/memory${k}/besteffort/podorphan/c1`, {
      recursive: true,
    });
    await Deno.writeTextFile(
      `${mount}/memory${k}/besteffort/podorphan/c1/cgroup.procs`,
      "41\n7\n",
    );
    await Deno.mkdir(`${mount}/cpu${k}/podvol`, { recursive: true });
    await Deno.writeTextFile(`${mount}/cpu${k}/podvol/cpu.shares`, "1024");
    await Deno.writeTextFile(`${mount}/cpu${k}/burstable/cpu.shares`, "9");
    now += QOS_UPDATE_PERIOD_MS;
    await manager.housekeeping([burstable], (uid) => uid === "b1");
    assert.equal(await read(`${mount}/cpu${k}/burstable/cpu.shares`), "307");
    const left = await listPodCgroups(tree, [
      k,
      `${k}/burstable`,
      `${k}/besteffort`,
    ]);
    assert.deepEqual([...left.keys()].sort(), ["b1", "vol"]);
    assert.equal(await read(`${mount}/cpu${k}/podvol/cpu.shares`), "2");
    // the orphan's processes got SIGKILL first (7 had exited)
    assert.deepEqual(killed, [41]);
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("a failed kubepods update gives FailedNodeAllocatableEnforcement and is retried after a minute", async () => {
  const mount = await v1Mount();
  try {
    let refuse = true;
    const fs: CgroupTreeFs = {
      ...denoCgroupTreeFs,
      writeTextFile(path, text) {
        if (refuse && path.endsWith("/kubepods/memory.limit_in_bytes")) {
          return Promise.reject(
            new Deno.errors.Busy("device or resource busy"),
          );
        }
        return denoCgroupTreeFs.writeTextFile(path, text);
      },
    };
    const tree = await openCgroupTree(fs, mount, []);
    const reasons: string[] = [];
    let now = 0;
    const manager = createPodCgroupManager({
      tree,
      logger: new CaptureLogger(),
      clock: { now: () => now },
      events: { event: (_o, _t, reason) => reasons.push(reason) },
    }, {
      nodeName: "n1",
      cgroups: {},
      capacity: { cpuMillis: 1000, memoryBytes: GiB },
      allocatable: {},
      hugepageSizes: [],
    });
    await manager.start();
    assert.deepEqual(reasons, ["FailedNodeAllocatableEnforcement"]);
    refuse = false;
    await manager.housekeeping([], () => false);
    assert.equal(reasons.length, 1);
    now += QOS_UPDATE_PERIOD_MS;
    await manager.housekeeping([], () => false);
    assert.deepEqual(reasons, [
      "FailedNodeAllocatableEnforcement",
      "NodeAllocatableEnforced",
    ]);
    assert.equal(
      await read(`${mount}/memory/kubepods/memory.limit_in_bytes`),
      String(GiB),
    );
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("openPodCgroupManager() warns of cgroup v1 and leaves the systemd driver to the runtime", async () => {
  const mount = await v1Mount();
  try {
    const events: string[] = [];
    const deps = {
      logger: new CaptureLogger(),
      clock: { now: () => 0 },
      events: {
        event: (_o: unknown, type: string, reason: string) =>
          void events.push(`${type} ${reason}`),
      },
    };
    const options = {
      nodeName: "n1",
      memoryBytes: GiB,
      hostAccess: true,
      mount,
      hugepageSizes: [],
      allocatable: {},
    };
    assert.equal(
      await openPodCgroupManager(deps, {
        ...options,
        cgroups: { cgroupDriver: "systemd" },
      }),
      undefined,
    );
    assert.deepEqual(events, ["Warning CgroupV1"]);
    assert.ok(await openPodCgroupManager(deps, { ...options, cgroups: {} }));
    // without every permission the host is not looked at
    events.length = 0;
    assert.equal(
      await openPodCgroupManager(deps, {
        ...options,
        hostAccess: false,
        cgroups: {},
      }),
      undefined,
    );
    assert.deepEqual(events, []);
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("start() limits the enforced reserved cgroups and reports a missing one", async () => {
  const mount = await v1Mount();
  try {
    for (const h of ["cpu", "memory"]) {
      await Deno.mkdir(`${mount}/${h}/system.slice`);
    }
    const tree = await openCgroupTree(kernelRmdir, mount, []);
    const events: string[] = [];
    const manager = createPodCgroupManager({
      tree,
      logger: new CaptureLogger(),
      clock: { now: () => 0 },
      events: {
        event: (_o, type, reason, message) =>
          events.push(`${type} ${reason}: ${message}`),
      },
    }, {
      nodeName: "n1",
      cgroups: {},
      capacity: { cpuMillis: 2000, memoryBytes: 4 * GiB },
      allocatable: {
        enforce: ["pods", "system-reserved", "kube-reserved"],
        systemReserved: { memory: "512Mi", cpu: "250m" },
        kubeReserved: { memory: "256Mi" },
        systemReservedCgroup: "/system.slice",
        kubeReservedCgroup: "/missing.slice",
      },
      hugepageSizes: [],
    });
    await manager.start();
    assert.deepEqual(events, [
      "Normal NodeAllocatableEnforced: Updated Node Allocatable limit across pods",
      "Normal NodeAllocatableEnforced: Updated limits on system reserved cgroup /system.slice",
      'Warning FailedNodeAllocatableEnforcement: Failed to enforce Kube Reserved Cgroup Limits on "/missing.slice": cgroup "/missing.slice" does not exist',
    ]);
    assert.equal(
      await read(`${mount}/memory/system.slice/memory.limit_in_bytes`),
      String(512 * 1024 * 1024),
    );
    assert.equal(await read(`${mount}/cpu/system.slice/cpu.shares`), "256");
    assert.equal(
      await read(`${mount}/memory/kubepods/memory.limit_in_bytes`),
      String(3.25 * GiB),
    );
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("the pod cgroup manager on cgroup v2: weights, cpu.max, memory.max and orphan removal", async () => {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgv2-" });
  try {
    await Deno.writeTextFile(`${mount}/cgroup.controllers`, "cpu memory pids");
    const fs: CgroupTreeFs = { ...v2Kernel(), rmdir: kernelRmdir.rmdir };
    const tree = await openCgroupTree(fs, mount, ["2MB"]);
    const manager = createPodCgroupManager({
      tree,
      logger: new CaptureLogger(),
      clock: { now: () => 0 },
    }, {
      nodeName: "n1",
      cgroups: { cgroupRoot: "/r" },
      capacity: { cpuMillis: 4000, memoryBytes: 8 * GiB, pids: 1000 },
      allocatable: { systemReserved: { memory: "1Gi" } },
      hugepageSizes: ["2MB"],
    });
    const guaranteed = pod("g1", {
      requests: { cpu: "250m", memory: "64Mi" },
      limits: { cpu: "250m", memory: "64Mi" },
    });
    await manager.ensurePod(guaranteed);
    const k = `${mount}/r/kubepods`;
    assert.equal(await read(`${k}/memory.max`), String(7 * GiB));
    // 4096 shares
    assert.equal(await read(`${k}/cpu.weight`), "157");
    assert.equal(await read(`${k}/pids.max`), "1000");
    assert.equal(await read(`${k}/besteffort/cpu.weight`), "1");
    assert.equal(await read(`${k}/podg1/cpu.max`), "25000 100000");
    assert.equal(await read(`${k}/podg1/memory.max`), String(64 * 1024 * 1024));
    // no hugetlb controller here: no hugetlb files
    assert.equal(await read(`${k}/podg1/hugetlb.2MB.max`), undefined);
    await Deno.mkdir(`${k}/burstable/podstale`);
    await manager.housekeeping([guaranteed], (uid) => uid === "g1");
    assert.equal(
      await read(`${k}/burstable/podstale/cgroup.controllers`),
      undefined,
    );
    assert.ok(await read(`${k}/podg1/cgroup.controllers`) !== undefined);
    await manager.removePod(guaranteed);
    assert.equal(await read(`${k}/podg1/cpu.max`), undefined);
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("applyCgroup() skips controllers the host has no hierarchy for", async () => {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgv1-" });
  try {
    for (const h of ["cpu", "memory"]) await Deno.mkdir(`${mount}/${h}`);
    const tree = await openCgroupTree(denoCgroupTreeFs, mount, ["2MB"]);
    const written = await applyCgroup(tree, "/k/pod1", {
      cpuShares: 2,
      pidsLimit: 10,
      hugepageLimits: { "2MB": 0 },
    });
    assert.deepEqual(written.map((w) => w.file), ["cpu.shares"]);
    assert.deepEqual(
      (await denoCgroupTreeFs.readDirNames(mount)).sort(),
      ["cpu", "memory"],
    );
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("applyCgroup() on v1 creates the cgroup in every hierarchy but devices, cpuset filled from the parent", async () => {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgv1-" });
  try {
    for (const h of ["cpu", "cpuset", "devices", "freezer", "memory"]) {
      await Deno.mkdir(`${mount}/${h}`);
    }
    // the kernel gives a new cpuset cgroup empty files; the host's root has the CPUs
    await Deno.writeTextFile(`${mount}/cpuset/cpuset.cpus`, "0-3\n");
    await Deno.writeTextFile(`${mount}/cpuset/cpuset.mems`, "0\n");
    const kernelCpuset: CgroupTreeFs = {
      ...denoCgroupTreeFs,
      async mkdirs(path) {
        const parts = path.split("/");
        for (let i = 2; i <= parts.length; i++) {
          const dir = parts.slice(0, i).join("/");
          if (await denoCgroupTreeFs.exists(dir)) continue;
          await Deno.mkdir(dir);
          if (dir.startsWith(`${mount}/cpuset/`)) {
            await Deno.writeTextFile(`${dir}/cpuset.cpus`, "\n");
            await Deno.writeTextFile(`${dir}/cpuset.mems`, "\n");
          }
        }
      },
    };
    const tree = await openCgroupTree(kernelCpuset, mount, []);
    await applyCgroup(tree, "/r/kubepods/besteffort", { cpuShares: 2 });
    for (const h of ["cpu", "cpuset", "freezer", "memory"]) {
      assert.ok(
        await denoCgroupTreeFs.exists(`${mount}/${h}/r/kubepods/besteffort`),
        h,
      );
    }
    assert.equal(
      await denoCgroupTreeFs.exists(`${mount}/devices/r`),
      false,
    );
    for (const dir of ["r", "r/kubepods", "r/kubepods/besteffort"]) {
      assert.equal(await read(`${mount}/cpuset/${dir}/cpuset.cpus`), "0-3");
      assert.equal(await read(`${mount}/cpuset/${dir}/cpuset.mems`), "0");
    }
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("the pod cgroup manager with the systemd driver starts, limits and stops slice units", async () => {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgsd-" });
  try {
    await Deno.writeTextFile(
      `${mount}/cgroup.controllers`,
      "cpuset cpu io memory pids",
    );
    const tree = await openCgroupTree(v2Kernel(), mount, []);
    const slices = new RecordingCgroupSlices();
    const manager = createPodCgroupManager({
      tree,
      slices,
      logger: new CaptureLogger(),
      clock: { now: () => 0 },
    }, {
      nodeName: "n1",
      cgroups: { cgroupDriver: "systemd" },
      capacity: { cpuMillis: 2000, memoryBytes: 8 * GiB, pids: 4096 },
      allocatable: {},
      hugepageSizes: [],
    });
    const uid = "ab-12";
    const guaranteed = pod(uid, {
      requests: { cpu: "250m", memory: "64Mi" },
      limits: { cpu: "250m", memory: "64Mi" },
    });
    await manager.ensurePod(guaranteed);
    const started = slices.calls.filter((c) => c.startsWith("start "));
    assert.deepEqual(started, [
      "start kubepods.slice",
      "start kubepods-burstable.slice",
      "start kubepods-besteffort.slice",
      "start kubepods-podab_12.slice",
    ]);
    // the pod's limits go to systemd as well as to the files
    assert.ok(
      slices.calls.includes(
        `set kubepods-podab_12.slice {"cpuShares":256,"cpuPeriod":100000,"cpuQuota":25000,"memoryLimit":67108864}`,
      ),
      slices.calls.join("\n"),
    );
    const dir = `${mount}/kubepods.slice/kubepods-podab_12.slice`;
    assert.equal(await read(`${dir}/memory.max`), "67108864");
    assert.equal(await read(`${dir}/cpu.max`), "25000 100000");
    assert.deepEqual(
      await listPodCgroups(tree, ["/kubepods.slice"]),
      new Map([[uid, "/kubepods.slice/kubepods-podab_12.slice"]]),
    );

    // gone: the unit is stopped, then the directory removed
    for await (const e of Deno.readDir(dir)) {
      await Deno.remove(`${dir}/${e.name}`);
    }
    await manager.removePod(guaranteed);
    assert.ok(slices.calls.includes("stop kubepods-podab_12.slice"));
    assert.equal(await read(`${dir}/memory.max`), undefined);
    assert.equal(
      await Deno.stat(dir).then(() => "kept", () => "removed"),
      "removed",
    );
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});

Deno.test("the pod cgroup manager with the systemd driver makes no pod directory when systemd refuses the slice", async () => {
  const mount = await Deno.makeTempDir({ prefix: "kts-cgsd-" });
  try {
    await Deno.writeTextFile(`${mount}/cgroup.controllers`, "cpu memory pids");
    const tree = await openCgroupTree(v2Kernel(), mount, []);
    const slices = new RecordingCgroupSlices();
    slices.failStart = "kubepods-besteffort-podx.slice";
    const manager = createPodCgroupManager({
      tree,
      slices,
      logger: new CaptureLogger(),
      clock: { now: () => 0 },
    }, {
      nodeName: "n1",
      cgroups: { cgroupDriver: "systemd" },
      capacity: { cpuMillis: 2000, memoryBytes: 8 * GiB },
      allocatable: {},
      hugepageSizes: [],
    });
    await assert.rejects(
      () => manager.ensurePod(pod("x")),
      /systemd refused "kubepods-besteffort-podx.slice"/,
    );
    assert.equal(
      await Deno.stat(
        `${mount}/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podx.slice`,
      ).then(() => "made", () => "absent"),
      "absent",
    );
  } finally {
    await Deno.remove(mount, { recursive: true });
  }
});
