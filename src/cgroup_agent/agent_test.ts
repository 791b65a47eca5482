import * as assert from "node:assert/strict";
import { cgroupAgentClient, openCgroupAgentClient } from "./client.ts";
import { serveCgroupAgent } from "./agent.ts";
import { fakeHost, kernelLike, withAgent } from "./testing.ts";

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

Deno.test("the client drops a connection the agent does not answer and reconnects to a restarted agent", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-h9-client-" });
  const socket = `${dir}/cgroup-agent.sock`;
  try {
    // a listener that accepts and never answers
    const silent = Deno.listen({ transport: "unix", path: socket });
    const accepted: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of silent) accepted.push(conn);
    })().catch(() => {});
    const client = cgroupAgentClient(socket, { timeoutMs: 200 });
    await assert.rejects(
      () => client.fs.exists("/sys/fs/cgroup/cgroup.controllers"),
      /no answer to exists/,
    );
    silent.close();
    accepted.forEach((c) => c.close());
    await accepting;
    await Deno.mkdir(`${dir}/sys/fs/cgroup/memory`, { recursive: true });
    const agent = await serveCgroupAgent({
      socket,
      cgroupRoot: "/",
      root: dir,
    });
    try {
      assert.deepEqual(await client.fs.readDirNames("/sys/fs/cgroup"), [
        "memory",
      ]);
    } finally {
      client.close();
      agent.close();
      await agent.finished;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the agent's socket is never reachable by others, not even while it binds", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // a root dir others may enter, as /var/lib/kubelet usually is
    await Deno.chmod(dir, 0o755);
    const socket = `${dir}/cgroup-agent.sock`;
    const atBind: { socketMode: number; dirMode: number }[] = [];
    const agent = await serveCgroupAgent({
      socket,
      cgroupRoot: "/h9",
      root: dir,
      listen(path) {
        const listener = Deno.listen({ transport: "unix", path });
        const parent = path.slice(0, path.lastIndexOf("/"));
        atBind.push({
          socketMode: Deno.lstatSync(path).mode! & 0o777,
          dirMode: Deno.lstatSync(parent).mode! & 0o777,
        });
        return listener;
      },
    });
    try {
      assert.equal(atBind.length, 1);
      const [{ socketMode, dirMode }] = atBind as [typeof atBind[0]];
      // others can reach the fresh socket only if both it and its directory let them
      assert.ok(
        (socketMode & 0o077) === 0 || (dirMode & 0o077) === 0,
        `socket ${socketMode.toString(8)} in a ${
          dirMode.toString(8)
        } directory at bind`,
      );
      assert.equal((await Deno.lstat(socket)).mode! & 0o777, 0o600);
      assert.ok((await Deno.lstat(socket)).isSocket);
      // no leftover of the private bind directory
      assert.deepEqual(
        (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name),
        ["cgroup-agent.sock"],
      );
      const client = cgroupAgentClient(socket);
      assert.equal(await client.swapController(), undefined);
      client.close();
    } finally {
      agent.close();
      await agent.finished;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the agent carries the systemd driver's slice calls and refuses the rest", async () => {
  const root = await fakeHost();
  const socket = `${root}/cgroup-agent.sock`;
  const calls: unknown[][] = [];
  const agent = await serveCgroupAgent({
    socket,
    cgroupRoot: "/",
    cgroupDriver: "systemd",
    root,
    fs: kernelLike,
    slices: {
      start: (cgroup) => Promise.resolve(void calls.push(["start", cgroup])),
      set: (cgroup, resources) =>
        Promise.resolve(void calls.push(["set", cgroup, resources])),
      stop: (cgroup) => Promise.resolve(void calls.push(["stop", cgroup])),
    },
  });
  const client = cgroupAgentClient(socket);
  try {
    const pod = "/kubepods.slice/kubepods-pod1_2.slice";
    await client.slices.start(pod);
    // hugepages have no unit property: the client sends the numbers and the CPU list only
    await client.slices.set(pod, {
      cpuShares: 256,
      memoryLimit: 1 << 26,
      cpuSet: "0-1",
      hugepageLimits: { "2MB": 0 },
    } as never);
    await client.slices.stop(pod);
    await assert.rejects(
      () => client.slices.start("/system.slice"),
      Deno.errors.PermissionDenied,
    );
    await assert.rejects(
      () => client.slices.stop("/kubepods.slice"),
      Deno.errors.PermissionDenied,
    );
    assert.deepEqual(calls, [
      ["start", pod],
      ["set", pod, { cpuShares: 256, memoryLimit: 1 << 26, cpuSet: "0-1" }],
      ["stop", pod],
    ]);
  } finally {
    client.close();
    agent.close();
    await agent.finished;
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a slice call may take as long as systemd's job: its answer is awaited longer than a file's", async () => {
  const root = await fakeHost();
  const socket = `${root}/cgroup-agent.sock`;
  const agent = await serveCgroupAgent({
    socket,
    cgroupRoot: "/",
    cgroupDriver: "systemd",
    root,
    fs: kernelLike,
    slices: {
      start: () => new Promise((resolve) => setTimeout(resolve, 400)),
      set: () => Promise.resolve(),
      stop: () => Promise.resolve(),
    },
  });
  const client = cgroupAgentClient(socket, {
    timeoutMs: 100,
    sliceTimeoutMs: 5_000,
  });
  try {
    await client.slices.start("/kubepods.slice");
  } finally {
    client.close();
    agent.close();
    await agent.finished;
    await Deno.remove(root, { recursive: true });
  }
});
