/**
 * The bundled kubelet under exactly its planned permission lists (no /sys, no /proc) manages
 * its cgroups through the cgroup agent (`deno run -A src/cgroup_agent/main.ts`) on a private
 * runtime-only containerd (10.80-85) with a cgroup root of its own: kubepods gets the node
 * allocatable memory limit, a Burstable static pod's cgroup its memory limit and its
 * downwardAPI volume a tmpfs the agent mounts (and unmounts with the pod), an orphaned
 * pod cgroup goes in housekeeping and the pod's cgroup goes once the pod is removed. Skipped without `KUBELET_TS_CRI_ENDPOINT` /
 * `KUBELET_TS_CRI_ROOT` (scripts/cri_env.sh up) or root.
 */
import assert from "node:assert/strict";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { cgroupAgentSocket } from "../../src/cgroup_agent/client.ts";
import {
  CHILD_ENV,
  collectStderr,
  finishBundled,
  freePort,
  podNetworkFields,
  ROOT,
  spawnBundled,
  writeKubeletConfig,
} from "./_helpers.ts";
import {
  IMAGE,
  privateCri,
  privateCriMissing,
  waitFor,
} from "../pod/_containerd_e2e.ts";
import { readCgroupFile, removeCgroupTree } from "../pod/_cgroups.ts";
import { mountOf, mountsBelow } from "../_mounts.ts";

const MOUNT = "/sys/fs/cgroup";

/** The directory of a cgroup in the memory controller (v1) or the v2 tree. */
async function memoryDir(cgroup: string): Promise<string> {
  const v2 = await readCgroupFile(`${MOUNT}/cgroup.controllers`);
  return v2 === undefined ? `${MOUNT}/memory${cgroup}` : `${MOUNT}${cgroup}`;
}

/**
 * `<mount point> tmpfs <options>` of the host's tmpfs mounts below `dir`, but for the root
 * dir's bind on itself (which is a tmpfs where `dir` is on one).
 */
async function tmpfsMounts(dir: string): Promise<string[]> {
  return (await mountsBelow(dir)).filter((m) =>
    m.type === "tmpfs" && m.path !== `${dir}/root`
  ).map((m) => `${m.path} ${m.type} ${m.options}`);
}

async function podDirs(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isDirectory && e.name.startsWith("pod")) names.push(e.name);
    }
  } catch { /* not there (yet) */ }
  return names;
}

Deno.test({
  name:
    "containerd, bundled with planned permissions + the cgroup agent: kubepods and pod limits, pod cgroup removed",
  ignore: privateCriMissing,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cri = await privateCri("h9ag");
    const id = crypto.randomUUID().slice(0, 6);
    const cgroupRoot = `/h9-${id}`;
    const node = `h9-agent-${id}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-h9-agent-" });
    await Deno.mkdir(`${dir}/manifests`);
    await Deno.mkdir(`${dir}/root`);
    const agent = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}src/cgroup_agent/main.ts`,
        `--socket=${cgroupAgentSocket(`${dir}/root`)}`,
        `--cgroup-root=${cgroupRoot}`,
      ],
      env: CHILD_ENV,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const agentLog = collectStderr(agent);
    await using _cleanup = {
      async [Symbol.asyncDispose]() {
        try {
          agent.kill("SIGTERM");
        } catch { /* already stopped */ }
        await agent.status;
        await agentLog.done;
        await removeCgroupTree(cgroupRoot);
      },
    };
    await waitFor(
      "the agent to listen",
      () => agentLog.text().includes("serving") || undefined,
      30_000,
    );
    const manifest = `${dir}/manifests/burst.json`;
    await Deno.writeTextFile(
      manifest,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "burst" },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{
            name: "c",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sleep", "3600"],
            resources: {
              requests: { cpu: "50m" },
              limits: { memory: "64Mi" },
            },
            volumeMounts: [{ name: "info", mountPath: "/info" }],
          }],
          volumes: [{
            name: "info",
            downwardAPI: {
              items: [{
                path: "name",
                fieldRef: { fieldPath: "metadata.name" },
              }],
            },
          }],
        },
      }),
    );
    const subnet = cri.env.KTS_CRI_SUBNET!;
    const args = await writeKubeletConfig(
      dir,
      [
        ...podNetworkFields(dir, cri.endpoint, subnet, freePort()),
        `cgroupRoot: ${cgroupRoot}`,
      ],
      ["--hostname-override", node],
    );
    const { grants, child } = await spawnBundled(dir, args);
    const stderr = collectStderr(child);
    const runtime = createCriRuntime({
      endpoint: cri.endpoint,
      timeoutMs: 30_000,
    });
    await finishBundled({ child, stderr }, { runtime, dir }, async () => {
      // the kubelet itself cannot open /sys: no every-permission grant
      assert.ok(!grants.some((g) => /^--allow-(all|run|ffi)\b|^-A$/.test(g)));
      assert.ok(!grants.some((g) => g.includes("/sys")), grants.join(" "));
      const kubepods = await memoryDir(`${cgroupRoot}/kubepods`);
      // the runtime may make kubepods first (unlimited) for a pod cgroup it was handed
      const capacity = Deno.systemMemoryInfo().total;
      await waitFor(
        `kubepods' memory limit at the node's ${capacity} bytes`,
        async () =>
          Number(
              await readCgroupFile(`${kubepods}/memory.limit_in_bytes`) ??
                await readCgroupFile(`${kubepods}/memory.max`),
            ) === capacity || undefined,
        30_000,
      );
      assert.match(stderr.text(), /Managing cgroups through the cgroup agent/);
      // the agent made the root dir a shared mount at the kubelet's start (MakeRShared)
      const rootMount = await mountOf(`${dir}/root`);
      assert.equal(rootMount?.shared, true, JSON.stringify(rootMount));
      const [pod] = await waitFor(
        "the Burstable pod's cgroup",
        async () => {
          const found = await podDirs(`${kubepods}/burstable`);
          return found.length ? found : undefined;
        },
        60_000,
      );
      const podDir = `${kubepods}/burstable/${pod}`;
      // the directory is made before its limits are written: wait for them
      const readLimit = async () =>
        await readCgroupFile(`${podDir}/memory.limit_in_bytes`) ??
          await readCgroupFile(`${podDir}/memory.max`);
      await waitFor(
        "the pod cgroup's memory limit",
        async () =>
          await readLimit() === String(64 * 1024 * 1024) ? true : undefined,
        30_000,
      ).catch(() => undefined);
      assert.equal(await readLimit(), String(64 * 1024 * 1024));
      // its downwardAPI volume is on a tmpfs the agent mounted, sized by the pod's limit
      const [uid] = await Array.fromAsync(Deno.readDir(`${dir}/root/pods`));
      const info = `${dir}/root/pods/${
        uid!.name
      }/volumes/kubernetes.io~downward-api/info`;
      const infoMount = (await tmpfsMounts(dir)).find((m) =>
        m.startsWith(`${info} `)
      );
      assert.match(infoMount ?? "", /^\S+ tmpfs \S*size=65536k/);
      // deno-lint-ignore no-console
      console.log(`agent-mounted: ${infoMount}`);
      // an orphan (a pod cgroup no pod owns) goes in housekeeping, through the agent too
      const orphan = `pod${crypto.randomUUID()}`;
      const orphanPath = `${cgroupRoot}/kubepods/besteffort/${orphan}`;
      const orphanDirs = kubepods.startsWith(`${MOUNT}/memory/`)
        ? ["cpu", "memory"].map((h) => `${MOUNT}/${h}${orphanPath}`)
        : [`${MOUNT}${orphanPath}`];
      for (const d of orphanDirs) await Deno.mkdir(d, { recursive: true });
      await waitFor(
        "housekeeping to remove the orphaned pod cgroup",
        async () =>
          !(await podDirs(`${kubepods}/besteffort`)).includes(orphan) ||
          undefined,
        30_000,
      );
      await Deno.remove(manifest);
      await waitFor(
        "the pod cgroup to be removed",
        async () =>
          (await podDirs(`${kubepods}/burstable`)).length === 0 || undefined,
        60_000,
      );
      await waitFor(
        "the agent to unmount the pod's tmpfs",
        async () => (await tmpfsMounts(dir)).length === 0 || undefined,
        30_000,
      );
    });
    assert.doesNotMatch(agentLog.text(), /PermissionDenied/);
  },
});
