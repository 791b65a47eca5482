import * as assert from "node:assert/strict";
import { CaptureLogger } from "../log/testing.ts";
import { type CgroupTreeFs, denoCgroupTreeFs } from "../pod/cgroup_tree.ts";
import { openPodCgroupManager } from "../pod/pod_cgroup_manager.ts";
import type { Pod } from "../pod/types.ts";
import { serveCgroupAgent } from "./agent.ts";
import { cgroupAgentClient, openCgroupAgentClient } from "./client.ts";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** The host file system, with the kernel's rmdir: a cgroup's interface files go with it. */
const kernelLike: CgroupTreeFs = {
  ...denoCgroupTreeFs,
  async rmdir(path) {
    for await (const e of Deno.readDir(path)) {
      if (e.isDirectory) throw new Deno.errors.Busy(`${path} has children`);
    }
    await Deno.remove(path, { recursive: true });
  },
};

/** A temp dir standing in for `/`: a cgroup v1 mount and the fact files. */
async function fakeHost(): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "kts-h9-agent-" });
  for (const h of ["cpu", "memory", "pids"]) {
    await Deno.mkdir(`${root}/sys/fs/cgroup/${h}`, { recursive: true });
  }
  await Deno.mkdir(`${root}/proc/sys/kernel`, { recursive: true });
  await Deno.writeTextFile(`${root}/proc/sys/kernel/pid_max`, "4194304\n");
  await Deno.writeTextFile(`${root}/proc/sys/kernel/threads-max`, "9000\n");
  const pages = `${root}/sys/kernel/mm/hugepages/hugepages-2048kB`;
  await Deno.mkdir(pages, { recursive: true });
  await Deno.writeTextFile(`${pages}/nr_hugepages`, "0\n");
  return root;
}

async function withAgent(
  fn: (root: string, socket: string, errors: string[]) => Promise<void>,
): Promise<void> {
  const root = await fakeHost();
  const socket = `${root}/cgroup-agent.sock`;
  const errors: string[] = [];
  const agent = await serveCgroupAgent({
    socket,
    cgroupRoot: "/h9",
    root,
    fs: kernelLike,
    onError: (m) => void errors.push(m),
  });
  try {
    await fn(root, socket, errors);
  } finally {
    agent.close();
    await agent.finished;
    await Deno.remove(root, { recursive: true });
  }
}

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

Deno.test("the agent refuses escapes over the socket with PermissionDenied", async () => {
  await withAgent(async (root, socket, errors) => {
    const agent = cgroupAgentClient(socket);
    try {
      const m = "/sys/fs/cgroup/memory";
      await Deno.mkdir(`${root}${m}/h9/kubepods/burstable`, {
        recursive: true,
      });
      await Deno.mkdir(`${root}/outside`);
      await Deno.symlink(
        `${root}/outside`,
        `${root}${m}/h9/kubepods/burstable/podevil`,
      );
      const attempts: [string, () => Promise<unknown>][] = [
        [
          "dot-dot",
          () =>
            agent.fs.writeTextFile(
              `${m}/h9/kubepods/../../x/memory.limit_in_bytes`,
              "1",
            ),
        ],
        ["a sibling", () => agent.fs.mkdirs(`${m}/system.slice/x`)],
        [
          "a symlink",
          () =>
            agent.fs.writeTextFile(
              `${m}/h9/kubepods/burstable/podevil/memory.limit_in_bytes`,
              "1",
            ),
        ],
        [
          "a symlink's dir",
          () => agent.fs.readDirNames(`${m}/h9/kubepods/burstable/podevil`),
        ],
        ["other files", () => agent.fs.readTextFile("/etc/passwd")],
        ["kill pid 1", () => agent.kill(1, "/h9/kubepods/burstable/podx")],
      ];
      for (const [name, attempt] of attempts) {
        await assert.rejects(attempt, Deno.errors.PermissionDenied, name);
      }
      assert.deepEqual(
        await Array.fromAsync(Deno.readDir(`${root}/outside`)),
        [],
      );
      assert.equal(errors.length, attempts.length);
      // a pid the cgroup does not list is not killed
      const child = new Deno.Command("sleep", { args: ["30"] }).spawn();
      try {
        await assert.rejects(
          () => agent.kill(child.pid, "/h9/kubepods/burstable/podx"),
          Deno.errors.NotFound,
        );
      } finally {
        child.kill("SIGKILL");
        await child.status;
      }
      // the connection still serves after refusals
      assert.deepEqual(
        await agent.fs.readDirNames("/sys/kernel/mm/hugepages"),
        [
          "hugepages-2048kB",
        ],
      );
    } finally {
      agent.close();
    }
  });
});

Deno.test("openCgroupAgentClient() names a missing socket", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const opened = await openCgroupAgentClient(`${dir}/cgroup-agent.sock`);
    assert.ok("reason" in opened);
    assert.match(
      opened.reason,
      /no cgroup agent socket at .*cgroup-agent\.sock/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
