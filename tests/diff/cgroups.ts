/**
 * Snapshots of the cgroup tree a kubelet manages (cgroup v1, cgroupfs driver), masked so that
 * two kubelets with different cgroup roots and pod UIDs compare: the root becomes `<root>`, a
 * pod's `pod<uid>` directory `pod<name>`, and a container's directory (named by its runtime
 * ID) `<container>`.
 */
import { shortMethod, type TraceEntry } from "./normalize.ts";

/** The files a kubelet writes, per hierarchy; `*` stands for a hugepage size. */
export const CGROUP_FILES: Record<string, string[]> = {
  cpu: ["cpu.shares", "cpu.cfs_quota_us", "cpu.cfs_period_us"],
  memory: ["memory.limit_in_bytes"],
  pids: ["pids.max"],
  hugetlb: ["hugetlb.*.limit_in_bytes"],
  cpuset: ["cpuset.cpus", "cpuset.mems"],
};

export interface CgroupSnapshot {
  /** Masked directories, `<hierarchy>:<path>`, sorted, each once. */
  dirs: string[];
  /** Masked `<hierarchy>:<path>/<file>` → the file's content, trimmed. */
  files: Record<string, string>;
}

/** Pod UID → pod name, from the sandboxes the trace shows. */
export function podNames(entries: TraceEntry[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of entries) {
    if (shortMethod(e.method) !== "RunPodSandbox") continue;
    const md = (e.request?.config as {
      metadata?: { uid?: string; name?: string };
    } | undefined)?.metadata;
    if (md?.uid && md.name) out.set(md.uid, md.name);
  }
  return out;
}

const CONTAINER_DIR = /^[0-9a-f]{64}$/;

/**
 * A cgroup path below the kubelet's root (`/kubepods/burstable/pod<uid>/<id>`), masked; the
 * root itself is `<root>`.
 */
export function maskCgroupPath(
  relative: string,
  names: Map<string, string>,
): string {
  const parts = relative.split("/").filter((p) => p !== "").map((p) => {
    if (CONTAINER_DIR.test(p)) return "<container>";
    const uid = p.startsWith("pod") ? p.slice(3) : undefined;
    return uid !== undefined && names.has(uid) ? `pod<${names.get(uid)}>` : p;
  });
  return ["<root>", ...parts].join("/");
}

function matches(pattern: string, file: string): boolean {
  const [head, tail] = pattern.split("*");
  return tail === undefined
    ? file === pattern
    : file.startsWith(head!) && file.endsWith(tail);
}

/** Reads `kubepods` and everything below it under `root` in each hierarchy. */
export async function snapshotCgroups(
  root: string,
  names: Map<string, string>,
  mount = "/sys/fs/cgroup",
): Promise<CgroupSnapshot> {
  const dirs = new Set<string>();
  const files: Record<string, string> = {};
  const walk = async (h: string, relative: string): Promise<void> => {
    const abs = `${mount}/${h}${root}${relative}`;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(abs));
    } catch (e) {
      // a pod's cgroup can go away while we look
      if (e instanceof Deno.errors.NotFound) return;
      throw e;
    }
    const masked = maskCgroupPath(relative, names);
    dirs.add(`${h}:${masked}`);
    // containers' own cgroups are the runtime's: only that they exist counts
    if (masked.endsWith("<container>")) return;
    for (const entry of entries) {
      if (entry.isDirectory) {
        await walk(h, `${relative}/${entry.name}`);
      } else if (CGROUP_FILES[h]?.some((p) => matches(p, entry.name))) {
        const text = await Deno.readTextFile(`${abs}/${entry.name}`).catch(
          () => undefined,
        );
        if (text !== undefined) {
          files[`${h}:${masked}/${entry.name}`] = text.trim();
        }
      }
    }
  };
  // directories in every hierarchy (upstream creates its cgroups in each), files in those above
  const hierarchies = await Array.fromAsync(Deno.readDir(mount));
  for (const h of hierarchies.map((e) => e.name).sort()) {
    await walk(h, "/kubepods");
  }
  return { dirs: [...dirs].sort(), files };
}
