/**
 * Resources, QoS cgroups, DNS, the managed /etc/hosts and the image user end to end on a real
 * containerd (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh); skipped without it. Pods go
 * under a cgroup root of their own (`/kts-test/res-…`, removed at the end): the kubelet's
 * housekeeping removes pod cgroups it does not know under its root.
 */
import assert from "node:assert/strict";
import { CaptureLogger } from "../../src/log/testing.ts";
import { readCgroupFile, removeCgroupTree } from "./_cgroups.ts";
import { readNodeResources } from "../../src/pod/mod.ts";
import { openPodCgroupManager } from "../../src/pod/cgroups/pod_cgroup_manager.ts";
import { hasEveryPermission } from "../../src/pod/containers/pod_environment.ts";
import {
  endpoint,
  IMAGE,
  running,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

const sleeper = ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"];

Deno.test({
  name:
    "containerd: limits reach the container cgroup under its QoS parent, removed with the pod; id, /etc/hosts and DNS as configured",
  ignore: !endpoint,
  async fn() {
    const node = await readNodeResources(new CaptureLogger());
    const root = `/kts-test/res-${crypto.randomUUID().slice(0, 8)}`;
    const cgroups = { cgroupRoot: root };
    const podCgroups = await openPodCgroupManager({
      logger: new CaptureLogger(),
      clock: { now: () => Date.now() },
    }, {
      nodeName: "kts-test",
      cgroups,
      memoryBytes: node.memoryCapacity,
      hostAccess: hasEveryPermission(),
      hugepageSizes: node.hugepageSizes,
      allocatable: {},
    });
    try {
      await using e = await startE2e({
        rootDir: true,
        environment: {
          cgroups,
          resolvConf: "/etc/resolv.conf",
          node,
          ...(podCgroups ? { podCgroups } : {}),
        },
      });
      await e.write("limited.yaml", {
        metadata: { name: "limited" },
        spec: {
          terminationGracePeriodSeconds: 1,
          hostAliases: [{ ip: "10.1.2.3", hostnames: ["alias.test"] }],
          containers: [{
            name: "app",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: sleeper,
            resources: {
              requests: { cpu: "50m", memory: "32Mi" },
              limits: { cpu: "250m", memory: "64Mi" },
            },
          }, {
            name: "user",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: sleeper,
            securityContext: { runAsUser: 1234 },
          }],
        },
      });
      const containers = await waitFor("both containers running", async () => {
        const cs = running(await e.containers("limited"));
        return cs.length === 2 ? cs : undefined;
      });
      const app = containers.find((c) => c.name === "app")!;
      const user = containers.find((c) => c.name === "user")!;
      const podCgroup = `${root}/kubepods/burstable/pod${app.uid}`;
      assert.equal(
        await readCgroupFile(
          `/sys/fs/cgroup/memory${podCgroup}/${app.id}/memory.limit_in_bytes`,
        ),
        String(64 * 1024 * 1024),
      );
      assert.equal(
        await readCgroupFile(
          `/sys/fs/cgroup/cpu${podCgroup}/${app.id}/cpu.cfs_quota_us`,
        ),
        "25000",
      );
      // the pod cgroup itself, made before the sandbox: shares from the pod's requests; no pod
      // memory limit, as the second container declares none (upstream ResourceConfigForPod)
      assert.equal(
        await readCgroupFile(`/sys/fs/cgroup/cpu${podCgroup}/cpu.shares`),
        "51",
      );
      assert.equal(
        await readCgroupFile(`/sys/fs/cgroup/cpu${podCgroup}/cpu.cfs_quota_us`),
        "-1",
      );
      const exec = async (containerId: string, cmd: string[]) => {
        const res = await e.runtime.execSync({
          containerId,
          cmd,
          timeout: 10n,
        });
        return new TextDecoder().decode(res.stdout);
      };
      // the image has no user: root, as upstream resolves it through ImageStatus
      assert.equal((await exec(app.id, ["id", "-u"])).trim(), "0");
      assert.equal((await exec(user.id, ["id", "-u"])).trim(), "1234");
      const hosts = await exec(app.id, ["cat", "/etc/hosts"]);
      assert.match(
        hosts,
        /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/,
      );
      assert.match(hosts, new RegExp(`\\tlimited-${e.node}\\n`));
      assert.match(
        hosts,
        /# Entries added by HostAliases\.\n10\.1\.2\.3\talias\.test\n$/,
      );
      const nameservers = (await Deno.readTextFile("/etc/resolv.conf"))
        .split("\n").filter((l) => l.startsWith("nameserver"));
      const resolv = await exec(app.id, ["cat", "/etc/resolv.conf"]);
      for (const line of nameservers) assert.ok(resolv.includes(line), resolv);
      await e.remove("limited.yaml");
      // once the pod is terminated its cgroup goes, as upstream SyncTerminatedPod removes it
      await waitFor("the pod cgroup removed", async () => {
        const cs = running(await e.containers("limited"));
        const left = await readCgroupFile(
          `/sys/fs/cgroup/memory${podCgroup}/memory.limit_in_bytes`,
        );
        return cs.length === 0 && left === undefined ? true : undefined;
      }, 30_000);
    } finally {
      await removeCgroupTree(root);
    }
  },
});
