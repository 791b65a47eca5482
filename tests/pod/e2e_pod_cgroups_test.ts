/**
 * The kubelet's cgroup hierarchy on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh) and the host's cgroup v1 tree: kubepods limited to node allocatable,
 * the burstable tier's shares following its pods, pod overhead in the pod cgroup and an
 * orphaned pod cgroup removed after a kubelet restart. Needs every permission (writes under
 * /sys/fs/cgroup); skipped without the runtime or on cgroup v2. Its cgroups live under a
 * random `/h5-…` root, removed at the end.
 */
import assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import { readNodeResources } from "../../src/pod/mod.ts";
import { openPodCgroupManager } from "../../src/pod/cgroups/pod_cgroup_manager.ts";
import { readCgroupFile as read, removeCgroupTree } from "./_cgroups.ts";
import { endpoint, running, startE2e, waitFor } from "./_containerd_e2e.ts";

const MOUNT = "/sys/fs/cgroup";
const v1 = await Deno.stat(`${MOUNT}/cpu`).then(() => true, () => false);
const sleeper = ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"];

function pod(name: string, resources: object, extra: object = {}) {
  return {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "app",
        image: "kts.local/busybox:latest",
        imagePullPolicy: "IfNotPresent",
        command: sleeper,
        resources,
      }],
      ...extra,
    },
  };
}

Deno.test({
  name:
    "containerd: kubepods gets node allocatable, burstable follows its pods, overhead reaches the pod cgroup, orphans go after a restart",
  ignore: !endpoint || !v1,
  async fn() {
    const root = `/h5-${crypto.randomUUID().slice(0, 8)}`;
    const logger = new CaptureLogger();
    const node = await readNodeResources(logger);
    const events: string[] = [];
    const podCgroups = await openPodCgroupManager({
      logger,
      clock: { now: () => Date.now() },
      events: { event: (_o, type, reason) => events.push(`${type} ${reason}`) },
    }, {
      nodeName: "h5-node",
      cgroups: { cgroupRoot: root },
      memoryBytes: node.memoryCapacity,
      hostAccess: true,
      hugepageSizes: node.hugepageSizes,
      allocatable: {
        kubeReserved: { cpu: "500m", memory: "1Gi" },
        systemReserved: { memory: "512Mi" },
      },
    });
    assert.ok(podCgroups);
    const k = `${root}/kubepods`;
    try {
      await using e = await startE2e({
        cleanup: {},
        environment: {
          cgroups: { cgroupRoot: root },
          resolvConf: "/etc/resolv.conf",
          node,
          podCgroups,
        },
      });
      await e.write("b1.yaml", pod("b1", { requests: { cpu: "200m" } }));
      await e.write("b2.yaml", pod("b2", { requests: { cpu: "300m" } }));
      await e.write(
        "ovh.yaml",
        pod("ovh", {
          requests: { cpu: "100m", memory: "32Mi" },
          limits: { cpu: "100m", memory: "32Mi" },
        }, { overhead: { cpu: "50m", memory: "16Mi" } }),
      );
      const [ovh] = await waitFor("the three pods running", async () => {
        const all = await Promise.all(
          ["ovh", "b1", "b2"].map(async (p) => running(await e.containers(p))),
        );
        return all.every((cs) => cs.length === 1)
          ? all.map((cs) => cs[0]!)
          : undefined;
      });
      // kubepods: capacity minus kube- and system-reserved (no hard eviction), as upstream
      const hugepageBytes = await hugepagesTotal();
      assert.equal(
        await read(`${MOUNT}/memory${k}/memory.limit_in_bytes`),
        String(node.memoryCapacity - 1.5 * 1024 ** 3 - hugepageBytes),
      );
      assert.equal(
        await read(`${MOUNT}/cpu${k}/cpu.shares`),
        String(
          Math.floor(
            (navigator.hardwareConcurrency * 1000 - 500) * 1024 / 1000,
          ),
        ),
      );
      // upstream's start-up cgroupVersionCheck, then the kubepods limits
      assert.deepEqual(events, [
        "Warning CgroupV1",
        "Normal NodeAllocatableEnforced",
      ]);
      assert.equal(await read(`${MOUNT}/cpu${k}/besteffort/cpu.shares`), "2");
      // both burstable pods' requests: 500m
      assert.equal(await read(`${MOUNT}/cpu${k}/burstable/cpu.shares`), "512");
      // the Guaranteed pod's cgroup: limits plus overhead
      const ovhCgroup = `${k}/pod${ovh!.uid}`;
      assert.equal(
        await read(`${MOUNT}/memory${ovhCgroup}/memory.limit_in_bytes`),
        String(48 * 1024 * 1024),
      );
      assert.equal(
        await read(`${MOUNT}/cpu${ovhCgroup}/cpu.cfs_quota_us`),
        "15000",
      );
      assert.equal(await read(`${MOUNT}/cpu${ovhCgroup}/cpu.shares`), "153");
      // b2 leaves while the kubelet is down: after the restart its containers are stopped
      // as orphans and its cgroup is removed by housekeeping; burstable drops to b1's 200m
      const b2 = running(await e.containers("b2"))[0]!;
      const b2Cgroup = `${MOUNT}/cpu${k}/burstable/pod${b2.uid}`;
      await e.kubelet.stop();
      await e.remove("b2.yaml");
      await e.restartKubelet();
      await waitFor("the orphaned pod cgroup removed", async () => {
        const left = await read(`${b2Cgroup}/cpu.shares`);
        const shares = await read(`${MOUNT}/cpu${k}/burstable/cpu.shares`);
        return left === undefined && shares === "204" ? true : undefined;
      }, 45_000);
      assert.equal(running(await e.containers("b2")).length, 0);
      // b1 leaves while the kubelet runs: its cgroup goes at termination, burstable drops
      // to the minimum
      const b1Cgroup = `${MOUNT}/cpu${k}/burstable/pod${
        running(await e.containers("b1"))[0]!.uid
      }`;
      await e.remove("b1.yaml");
      await waitFor(
        "b1's cgroup removed and burstable back to 2 shares",
        async () => {
          const left = await read(`${b1Cgroup}/cpu.shares`);
          const shares = await read(`${MOUNT}/cpu${k}/burstable/cpu.shares`);
          return left === undefined && shares === "2" ? true : undefined;
        },
        30_000,
      );
    } finally {
      await removeCgroupTree(root);
    }
  },
});

async function hugepagesTotal(): Promise<number> {
  let total = 0;
  for await (const e of Deno.readDir("/sys/kernel/mm/hugepages")) {
    const kb = Number(/^hugepages-(\d+)kB$/.exec(e.name)?.[1] ?? 0);
    const pages = Number(
      await read(`/sys/kernel/mm/hugepages/${e.name}/nr_hugepages`) ?? 0,
    );
    total += kb * 1024 * pages;
  }
  return total;
}
