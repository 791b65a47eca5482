import * as assert from "node:assert/strict";
import {
  cgroupAgentClient,
  readFilesystemFigures,
} from "../../cgroup_agent/mod.ts";
import { withAgent } from "../../cgroup_agent/testing.ts";
import {
  type HostFiles,
  hostFilesOnHost,
  hostFilesThrough,
} from "./host_files.ts";

/** What node usage and eviction ask of the reader: a file's text, presence, its filesystem. */
async function answers(
  host: HostFiles,
  probe: string,
  paths: { present: string; absent: string },
) {
  const figures = await host.statfs(probe);
  return {
    text: await host.readTextFile(probe),
    present: await host.exists(paths.present),
    absent: await host.exists(paths.absent),
    capacityBytes: figures.capacityBytes,
    device: figures.device,
  };
}

Deno.test("the cgroup agent's reader gives the host's files, presence and filesystem figures", async () => {
  await withAgent(async (root, socket) => {
    const agent = cgroupAgentClient(socket);
    try {
      await Deno.writeTextFile(
        `${root}/proc/loadavg`,
        "0.00 0.01 0.05 1/234 5678\n",
      );
      // the cgroup v2 marker: present on this fake host, the v1 root file is not
      await Deno.writeTextFile(`${root}/sys/fs/cgroup/cgroup.controllers`, "");
      const direct = await readFilesystemFigures(`${root}/proc/loadavg`);
      assert.deepEqual(
        await answers(hostFilesThrough(agent), "/proc/loadavg", {
          present: "/sys/fs/cgroup/cgroup.controllers",
          absent: "/sys/fs/cgroup/memory/h9/kubepods/missing",
        }),
        {
          text: "0.00 0.01 0.05 1/234 5678\n",
          present: true,
          absent: false,
          capacityBytes: direct.capacityBytes,
          device: direct.device,
        },
      );
    } finally {
      agent.close();
    }
  });
});

Deno.test("the direct reader gives the host's files, presence and filesystem figures", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/meminfo`;
    await Deno.writeTextFile(file, "MemTotal: 2048 kB\n");
    const direct = await readFilesystemFigures(file);
    assert.deepEqual(
      await answers(hostFilesOnHost, file, {
        present: file,
        absent: `${dir}/missing`,
      }),
      {
        text: "MemTotal: 2048 kB\n",
        present: true,
        absent: false,
        capacityBytes: direct.capacityBytes,
        device: direct.device,
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
