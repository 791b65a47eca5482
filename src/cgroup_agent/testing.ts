/**
 * Test helpers: an agent serving a temporary directory that stands in for `/`.
 *
 * @module
 */

import { type CgroupTreeFs, denoCgroupTreeFs } from "./cgroup_fs.ts";
import { serveCgroupAgent } from "./agent.ts";

/** The host file system, with the kernel's rmdir: a cgroup's interface files go with it. */
export const kernelLike: CgroupTreeFs = {
  ...denoCgroupTreeFs,
  async rmdir(path) {
    for await (const e of Deno.readDir(path)) {
      if (e.isDirectory) throw new Deno.errors.Busy(`${path} has children`);
    }
    await Deno.remove(path, { recursive: true });
  },
};

/** A temp dir standing in for `/`: a cgroup v1 mount (cpu, memory, pids) and the fact files. */
export async function fakeHost(): Promise<string> {
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

/** Runs `fn` against an agent on a fresh {@linkcode fakeHost} (cgroupRoot `/h9`), then removes both. */
export async function withAgent(
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
