/**
 * The kubelet's side of the cgroup agent: a {@linkcode CgroupTreeFs}, a kill and the swap
 * fact over the agent's unix socket, one request at a time on one connection (reopened after
 * the agent restarts). Errors come back as the `Deno.errors` class the agent met, so
 * `NotFound` means the same as on the host.
 *
 * @module
 */

import type { CgroupTreeFs, FilesystemFigures } from "./cgroup_fs.ts";
import type { AgentRequest } from "./validate.ts";
import { errorMessage } from "../util/error_message.ts";
import type { TmpfsTarget } from "./volume_tmpfs.ts";
import type { SubPathBindSource, SubPathBindTarget } from "./volume_subpath.ts";
import type { LocalBlockExecutor } from "./volume_local_block_exec.ts";
import type { RootSharePlan } from "./root_shared.ts";
import type { SliceResources, Slices } from "../systemd/mod.ts";

export { CGROUP_AGENT_SOCKET, cgroupAgentSocket } from "./validate.ts";

/**
 * What the kubelet asks of the agent; the local block device calls are the executor's own
 * (docs/volumes.md, "A `local` PV on a block device").
 */
export interface CgroupAgentClient extends LocalBlockExecutor {
  fs: CgroupTreeFs;
  /** SIGKILL to `pid`, which must be in `cgroup` (a cgroupfs name below kubepods). */
  kill(pid: number, cgroup: string): Promise<void>;
  swapController(): Promise<"v1" | "v2" | undefined>;
  /** The systemd driver's slice units (an agent started with `--cgroup-driver=systemd`). */
  slices: Slices;
  /** statfs of the filesystem holding `path` (image GC and eviction signals). */
  statfs(path: string): Promise<FilesystemFigures>;
  /** A cgroup directory's modification time (ms), kubepods or below. */
  modifiedMs(path: string): Promise<number>;
  /** A tmpfs on a pod volume's directory (docs/volumes.md, "Memory-backed volumes"). */
  mountVolumeTmpfs(target: TmpfsTarget, sizeBytes: number): Promise<void>;
  /** Unmounts it; false when no tmpfs was mounted there. */
  unmountVolumeTmpfs(target: TmpfsTarget): Promise<boolean>;
  /** Pins a container's subPath with a bind mount (docs/volumes.md, "subPath"). */
  bindSubPath(
    target: SubPathBindTarget,
    source: SubPathBindSource,
  ): Promise<string>;
  /** Unmounts and removes every subPath pin of a pod. */
  cleanSubPaths(uid: string): Promise<void>;
  /** Makes the agent's root dir a shared mount (docs/volumes.md, "Mount propagation"). */
  shareRootDir(): Promise<RootSharePlan>;
  close(): void;
}

/** The error the agent reported, as the `Deno.errors` class it names when it names one. */
export function rebuildError(
  error: { name?: unknown; message?: unknown },
): Error {
  const name = String(error.name ?? "Error");
  const message = `cgroup agent: ${String(error.message ?? "")}`;
  const errors = Deno.errors as unknown as Record<
    string,
    new (m: string) => Error
  >;
  const Class = Object.hasOwn(errors, name) ? errors[name] : undefined;
  if (Class) return new Class(message);
  const e = new Error(message);
  e.name = name;
  return e;
}

/** The agent's answer to `shareRootDir`, checked. */
function rootSharePlan(value: unknown): RootSharePlan {
  const v = value as Record<string, unknown> | null;
  if (v?.action === "share") return { action: "share" };
  if (v?.action === "nothing" && typeof v.mountPoint === "string") {
    return { action: "nothing", mountPoint: v.mountPoint };
  }
  if (v?.action === "refuse" && typeof v.reason === "string") {
    return { action: "refuse", reason: v.reason };
  }
  throw new TypeError(
    `cgroup agent: unexpected answer to shareRootDir: ${JSON.stringify(value)}`,
  );
}

/** The numbers the agent takes for a slice: a caller's wider settings (hugepages) are left out. */
function sliceResourcesOnly(resources: SliceResources): SliceResources {
  const out: SliceResources = {};
  for (
    const key of [
      "cpuShares",
      "cpuQuota",
      "cpuPeriod",
      "memoryLimit",
      "pidsLimit",
    ] as const
  ) {
    if (resources[key] !== undefined) out[key] = resources[key];
  }
  if (resources.cpuSet !== undefined) out.cpuSet = resources.cpuSet;
  return out;
}

/** How long one answer may take; then the connection is dropped (a hung agent must not stall pods). */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * A slice call waits for systemd's job inside the agent (up to 30 s, as libcontainer) after
 * perhaps connecting to the bus: its answer may take that long.
 */
const SLICE_TIMEOUT_MS = 45_000;
const SLICE_OPS = new Set(["startSlice", "setSlice", "stopSlice"]);
/** Formatting a local PV's device (mkfs of an empty disk) may take this long. */
const FORMAT_TIMEOUT_MS = 120_000;

/** A client on `socket`; nothing is connected until the first request. */
export function cgroupAgentClient(
  socket: string,
  options: { timeoutMs?: number; sliceTimeoutMs?: number } = {},
): CgroupAgentClient {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const sliceTimeoutMs = options.sliceTimeoutMs ?? SLICE_TIMEOUT_MS;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let conn: Deno.UnixConn | undefined;
  let buffered = "";
  let queue: Promise<unknown> = Promise.resolve();

  const readLine = async (c: Deno.UnixConn): Promise<string> => {
    const chunk = new Uint8Array(64 * 1024);
    while (!buffered.includes("\n")) {
      const n = await c.read(chunk);
      if (n === null) throw new Error("the agent closed the connection");
      buffered += decoder.decode(chunk.subarray(0, n), { stream: true });
    }
    const nl = buffered.indexOf("\n");
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    return line;
  };

  const roundTrip = async (req: AgentRequest): Promise<unknown> => {
    let c = conn;
    try {
      c ??= conn = await Deno.connect({ transport: "unix", path: socket });
      const bytes = encoder.encode(JSON.stringify(req) + "\n");
      for (let off = 0; off < bytes.length;) {
        off += await c.write(bytes.subarray(off));
      }
      const open = c;
      const timer = setTimeout(
        () => {
          try {
            open.close(); // the pending read rejects
          } catch { /* already closed */ }
        },
        SLICE_OPS.has(req.op)
          ? sliceTimeoutMs
          : req.op === "mountLocalBlock"
          ? Math.max(timeoutMs, FORMAT_TIMEOUT_MS)
          : timeoutMs,
      );
      let line: string;
      try {
        line = await readLine(c);
      } catch (error) {
        throw new Error(
          `no answer to ${req.op}: ${errorMessage(error)}`,
        );
      } finally {
        clearTimeout(timer);
      }
      const res = JSON.parse(line) as {
        ok: boolean;
        value?: unknown;
        error?: { name?: unknown; message?: unknown };
      };
      if (!res.ok) throw rebuildError(res.error ?? {});
      return res.value;
    } catch (error) {
      // a broken connection is dropped; the next request reconnects
      if (
        !(error instanceof Error && error.message.startsWith("cgroup agent:"))
      ) {
        try {
          c?.close();
        } catch { /* already closed */ }
        conn = undefined;
        buffered = "";
        if (error instanceof Error) {
          error.message = `cgroup agent at ${socket}: ${error.message}`;
        }
      }
      throw error;
    }
  };

  const request = (req: AgentRequest): Promise<unknown> => {
    const next = queue.then(() => roundTrip(req));
    queue = next.catch(() => {});
    return next;
  };

  return {
    fs: {
      exists: async (path) => (await request({ op: "exists", path })) === true,
      readDirNames: async (path) =>
        (await request({ op: "readDirNames", path })) as string[],
      mkdirs: async (path) => {
        await request({ op: "mkdirs", path });
      },
      readTextFile: async (path) =>
        String(await request({ op: "readTextFile", path })),
      writeTextFile: async (path, text) => {
        await request({ op: "writeTextFile", path, text });
      },
      rmdir: async (path) => {
        await request({ op: "rmdir", path });
      },
    },
    kill: async (pid, cgroup) => {
      await request({ op: "kill", pid, cgroup });
    },
    swapController: async () => {
      const v = await request({ op: "swapController" });
      return v === "v1" || v === "v2" ? v : undefined;
    },
    slices: {
      start: async (cgroup) => {
        await request({ op: "startSlice", cgroup });
      },
      set: async (cgroup, resources) => {
        await request({
          op: "setSlice",
          cgroup,
          resources: sliceResourcesOnly(resources),
        });
      },
      stop: async (cgroup) => {
        await request({ op: "stopSlice", cgroup });
      },
    },
    statfs: async (path) =>
      (await request({ op: "statfs", path })) as FilesystemFigures,
    modifiedMs: async (path) => {
      const ms = await request({ op: "modifiedMs", path });
      if (typeof ms !== "number") {
        throw new Deno.errors.NotFound(`no modification time for "${path}"`);
      }
      return ms;
    },
    mountVolumeTmpfs: async (target, sizeBytes) => {
      await request({ op: "mountVolumeTmpfs", target, sizeBytes });
    },
    unmountVolumeTmpfs: async (target) =>
      (await request({ op: "unmountVolumeTmpfs", target })) === true,
    mountLocalBlock: async (target, mount) => {
      await request({ op: "mountLocalBlock", target, mount });
    },
    unmountLocalBlock: async (target) =>
      (await request({ op: "unmountLocalBlock", target })) === true,
    isBlockDevice: async (device) =>
      (await request({ op: "isBlockDevice", device })) === true,
    bindSubPath: async (target, source) =>
      String(await request({ op: "bindSubPath", target, source })),
    cleanSubPaths: async (uid) => {
      await request({ op: "cleanSubPaths", uid });
    },
    shareRootDir: async () =>
      rootSharePlan(await request({ op: "shareRootDir" })),
    close: () => {
      try {
        conn?.close();
      } catch { /* already closed */ }
      conn = undefined;
    },
  };
}

/**
 * The client when `socket` exists and the agent answers, else undefined with the reason (so
 * the kubelet can name it in its warning).
 */
export async function openCgroupAgentClient(
  socket: string,
): Promise<{ client: CgroupAgentClient } | { reason: string }> {
  try {
    await Deno.stat(socket);
  } catch {
    return { reason: `no cgroup agent socket at ${socket}` };
  }
  const client = cgroupAgentClient(socket);
  try {
    await client.swapController();
    return { client };
  } catch (error) {
    client.close();
    return {
      reason: errorMessage(error),
    };
  }
}
