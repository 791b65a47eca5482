/**
 * The kubelet's pod cgroup manager through the cgroup agent, on a temporary directory standing
 * in for `/` (no root, no containerd needed).
 */
import * as assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import {
  denoCgroupTreeFs,
  openCgroupAgentClient,
} from "../../src/cgroup_agent/mod.ts";
import { withAgent } from "../../src/cgroup_agent/testing.ts";
import { openPodCgroupManager } from "../../src/pod/cgroups/pod_cgroup_manager.ts";
import type { Pod } from "../../src/pod/types.ts";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

const burstable: Pod = {
  metadata: { name: "b", namespace: "default", uid: "u-1" },
  spec: {
    containers: [{
      name: "c",
      resources: { requests: { cpu: "100m" }, limits: { memory: "100Mi" } },
    }],
  },
};

Deno.test("the cgroup manager works through the agent: kubepods, a pod's limits, its processes killed and its cgroup removed", async () => {
  await withAgent(async (root, socket, errors) => {
    const opened = await openCgroupAgentClient(socket);
    assert.ok("client" in opened, JSON.stringify(opened));
    const agent = opened.client;
    try {
      const manager = await openPodCgroupManager({
        logger: new CaptureLogger(),
        clock: { now: () => 0 },
        fs: agent.fs,
        kill: agent.kill,
      }, {
        nodeName: "h9",
        cgroups: { cgroupRoot: "/h9" },
        memoryBytes: GiB,
        hostAccess: true,
        hugepageSizes: [],
        allocatable: {},
      });
      assert.ok(manager);
      await manager.start();
      const m = `${root}/sys/fs/cgroup`;
      const read = async (p: string) => (await Deno.readTextFile(p)).trim();
      assert.equal(
        await read(`${m}/memory/h9/kubepods/memory.limit_in_bytes`),
        String(GiB),
      );
      // the task limit comes from the fact files the agent reads
      assert.equal(await read(`${m}/pids/h9/kubepods/pids.max`), "9000");
      await manager.ensurePod(burstable);
      const pod = "h9/kubepods/burstable/podu-1";
      assert.equal(
        await read(`${m}/memory/${pod}/memory.limit_in_bytes`),
        String(100 * MiB),
      );
      const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
      await Deno.writeTextFile(
        `${m}/cpu/${pod}/cgroup.procs`,
        `${child.pid}\n`,
      );
      await manager.removePod(burstable);
      assert.equal((await child.status).signal, "SIGKILL");
      for (const h of ["cpu", "memory", "pids"]) {
        assert.equal(
          await denoCgroupTreeFs.exists(`${m}/${h}/${pod}`),
          false,
          h,
        );
      }
      assert.deepEqual(errors.filter((e) => !e.startsWith("NotFound")), []);
    } finally {
      agent.close();
    }
  });
});
