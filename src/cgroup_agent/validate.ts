/**
 * What the cgroup agent may do, decided without I/O: each request is checked against the
 * agent's scope (the cgroup mount, its version, the kubelet's `kubepods` cgroup and the
 * reserved cgroups). The table below is the whole policy: anything it does not name is
 * refused with a message saying why.
 *
 * @module
 */

import {
  checkTmpfsSize,
  checkTmpfsTarget,
  type TmpfsTarget,
} from "./volume_tmpfs.ts";
import {
  checkSubPathSource,
  checkSubPathTarget,
  type SubPathBindSource,
  type SubPathBindTarget,
} from "./volume_subpath.ts";
import {
  checkLocalBlockMount,
  checkLocalBlockTarget,
  type LocalBlockMount,
  type LocalBlockTarget,
} from "./volume_local_block.ts";
import {
  sliceComponents,
  slicePath,
  type SliceResources,
} from "../systemd/mod.ts";

/** The logical locations the agent serves (the executor may prefix a test root). */
export const CGROUP_MOUNT = "/sys/fs/cgroup";
export const HUGEPAGES_DIR = "/sys/kernel/mm/hugepages";
const FACT_FILES = [
  "/proc/sys/kernel/pid_max",
  "/proc/sys/kernel/threads-max",
  "/sys/module/apparmor/parameters/enabled",
  // eviction signals: the node's thread count and the root cgroup's memory
  "/proc/loadavg",
  // `/stats/summary`'s node network: the host namespace's interface counters
  "/proc/net/dev",
  `${CGROUP_MOUNT}/memory/memory.usage_in_bytes`,
  `${CGROUP_MOUNT}/memory/memory.stat`,
  `${CGROUP_MOUNT}/memory.stat`,
];
const NR_HUGEPAGES =
  /^\/sys\/kernel\/mm\/hugepages\/hugepages-\d+kB\/nr_hugepages$/;

/** The socket's name in the kubelet's root dir, which the permission plan grants. */
export const CGROUP_AGENT_SOCKET = "cgroup-agent.sock";

/** `<rootDir>/cgroup-agent.sock`. */
export function cgroupAgentSocket(rootDir: string): string {
  return `${rootDir.replace(/\/+$/, "")}/${CGROUP_AGENT_SOCKET}`;
}

/** One request line of the protocol. */
export type AgentRequest =
  | {
    op:
      | "exists"
      | "readDirNames"
      | "mkdirs"
      | "readTextFile"
      | "rmdir"
      | "modifiedMs";
    path: string;
  }
  | { op: "writeTextFile"; path: string; text: string }
  | { op: "kill"; pid: number; cgroup: string }
  | { op: "swapController" }
  | { op: "startSlice"; cgroup: string }
  | { op: "stopSlice"; cgroup: string }
  | { op: "setSlice"; cgroup: string; resources: SliceResources }
  | { op: "statfs"; path: string }
  | { op: "mountVolumeTmpfs"; target: TmpfsTarget; sizeBytes: number }
  | { op: "unmountVolumeTmpfs"; target: TmpfsTarget }
  | {
    op: "bindSubPath";
    target: SubPathBindTarget;
    source: SubPathBindSource;
  }
  | { op: "cleanSubPaths"; uid: string }
  | { op: "mountLocalBlock"; target: LocalBlockTarget; mount: LocalBlockMount }
  | { op: "unmountLocalBlock"; target: LocalBlockTarget }
  | { op: "isBlockDevice"; device: string }
  | { op: "shareRootDir" }
  | { op: "logindInhibitDelay" }
  | { op: "logindReload" }
  | { op: "logindInhibit" }
  | { op: "logindWatch" }
  | { op: "logindWriteInhibitDelay"; seconds: number };

/**
 * The largest `InhibitDelayMaxSec` the agent writes for the kubelet: a sandboxed kubelet may
 * hold the node's shutdown back by its grace period, not indefinitely.
 */
export const MAX_INHIBIT_DELAY_SECONDS = 3600;

/** The agent's configuration. */
export interface AgentConfig {
  /** The kubelet's `cgroupRoot` (cgroupfs form; "" or "/" for the root). */
  cgroupRoot: string;
  /** `kubeReservedCgroup` / `systemReservedCgroup`: their files may be written, nothing else. */
  reservedCgroups?: readonly string[];
  /**
   * The kubelet's `cgroupDriver` (default "cgroupfs"): with "systemd" the cgroups have the
   * slice form (`/kubepods.slice/...`) and the slice operations are served.
   */
  cgroupDriver?: "cgroupfs" | "systemd";
}

/** {@linkcode AgentConfig} resolved against the host. */
export interface AgentScope {
  version: "v1" | "v2";
  driver: "cgroupfs" | "systemd";
  /** Components of `<cgroupRoot>/kubepods` in the driver's form. */
  kubepods: readonly string[];
  reserved: readonly (readonly string[])[];
}

export function agentScope(
  config: AgentConfig,
  version: "v1" | "v2",
): AgentScope {
  const split = (p: string) => p.split("/").filter((c) => c !== "");
  const driver = config.cgroupDriver ?? "cgroupfs";
  return {
    version,
    driver,
    kubepods: driver === "systemd"
      ? split(slicePath([...sliceComponents(config.cgroupRoot), "kubepods"]))
      : [...split(config.cgroupRoot), "kubepods"],
    reserved: (config.reservedCgroups ?? []).map(split).filter((c) =>
      c.length > 0
    ),
  };
}

/** Where a cgroup directory sits relative to the scope. */
type Place = "ancestor" | "kubepods" | "below" | "reserved" | "none";

function startsWith(a: readonly string[], prefix: readonly string[]): boolean {
  return prefix.every((c, i) => a[i] === c);
}

function placeOf(scope: AgentScope, cgroup: readonly string[]): Place {
  const k = scope.kubepods;
  if (cgroup.length < k.length && startsWith(k, cgroup)) return "ancestor";
  if (cgroup.length === k.length && startsWith(cgroup, k)) return "kubepods";
  if (startsWith(cgroup, k)) return "below";
  if (
    scope.reserved.some((r) =>
      r.length === cgroup.length && startsWith(cgroup, r)
    )
  ) return "reserved";
  return "none";
}

/** Interface files of the controllers the kubelet sets; never `cgroup.procs` and the like. */
const SETTING_FILE =
  /^(cpu|cpuset|memory|pids|hugetlb|io|blkio)\.[A-Za-z0-9_.]+$/;
const ENABLE_ONLY = /^(\s*\+[a-z_]+)+\s*$/;
/** v1 cpuset files a new cgroup fills from its parent, read and written above kubepods too. */
const CPUSET_FILES = new Set(["cpuset.cpus", "cpuset.mems"]);
const CPUSET_VALUE = /^[0-9,\-\s]*$/;
const READ_ABOVE = new Set(["cgroup.controllers", ...CPUSET_FILES]);
/** The root cgroup's usage files the node's CPU and memory figures come from (read only). */
const NODE_USAGE_FILES = new Set([
  "cpuacct.usage",
  "cpu.stat",
  "memory.stat",
  "memory.usage_in_bytes",
]);

/** The refusal, or undefined when the component list is clean. */
function badComponents(parts: readonly string[]): string | undefined {
  for (const p of parts) {
    if (p === "" || p === "." || p === "..") {
      return `the path has an empty, "." or ".." component`;
    }
    if (p.includes("\0")) return "the path has a NUL byte";
  }
  return undefined;
}

/** A cgroup path split into the cgroup's components (v1: after the hierarchy). */
function cgroupParts(
  scope: AgentScope,
  path: string,
): { cgroup: string[] } | { error: string } {
  if (!path.startsWith(CGROUP_MOUNT + "/") && path !== CGROUP_MOUNT) {
    return { error: `"${path}" is not under ${CGROUP_MOUNT}` };
  }
  const parts = path.slice(CGROUP_MOUNT.length).split("/").slice(1);
  if (path === CGROUP_MOUNT) return { cgroup: [] };
  const bad = badComponents(parts);
  if (bad) return { error: `"${path}": ${bad}` };
  return { cgroup: scope.version === "v1" ? parts.slice(1) : parts };
}

const refuse = (req: AgentRequest, why: string) =>
  `cgroup agent refuses ${req.op}: ${why}`;

/** Characters of a slice unit's name (systemd's unit name alphabet without `\\`). */
const SLICE_NAME = /^[A-Za-z0-9:_.-]{1,249}\.slice$/;

/** Where each slice operation is allowed: the kubelet never starts or stops above kubepods. */
const SLICE_PLACES: Readonly<Record<string, readonly Place[]>> = {
  startSlice: ["kubepods", "below"],
  setSlice: ["kubepods", "below", "reserved"],
  stopSlice: ["below"],
};

const SLICE_RESOURCES: readonly (keyof SliceResources)[] = [
  "cpuShares",
  "cpuQuota",
  "cpuPeriod",
  "memoryLimit",
  "pidsLimit",
  "cpuSet",
];

/** A kernel CPU list: numbers and ranges, comma-separated. */
const CPU_LIST = /^\d{1,4}(-\d{1,4})?(,\d{1,4}(-\d{1,4})?)*$/;

/** Undefined when the numbers are integers the unit properties take (-1: none), else why. */
function badSliceResources(resources: unknown): string | undefined {
  if (typeof resources !== "object" || resources === null) {
    return "the resources must be an object";
  }
  for (const [key, value] of Object.entries(resources)) {
    if (!(SLICE_RESOURCES as readonly string[]).includes(key)) {
      return `unknown resource "${key}"; one of ${SLICE_RESOURCES.join(", ")}`;
    }
    if (key === "cpuSet") {
      if (typeof value !== "string" || !CPU_LIST.test(value)) {
        return `cpuSet must be a CPU list such as 0-3,6`;
      }
      continue;
    }
    const least = key === "cpuShares" || key === "cpuPeriod" ? 0 : -1;
    if (!Number.isSafeInteger(value) || (value as number) < least) {
      return `${key} must be an integer of at least ${least}`;
    }
  }
  return undefined;
}

/** The slice operations: the driver, the name's form, the place, the resources. */
function checkSlice(
  scope: AgentScope,
  req: Extract<AgentRequest, { op: "startSlice" | "setSlice" | "stopSlice" }>,
): string | undefined {
  if (scope.driver !== "systemd") {
    return refuse(
      req,
      "the agent serves the cgroupfs driver; start it with --cgroup-driver=systemd for slices",
    );
  }
  const parts = typeof req.cgroup === "string"
    ? req.cgroup.split("/").slice(1)
    : [];
  if (
    !req.cgroup.startsWith("/") || badComponents(parts) ||
    !parts.every((p) => SLICE_NAME.test(p)) ||
    slicePath(sliceComponents(req.cgroup)) !== req.cgroup
  ) {
    return refuse(
      req,
      `"${req.cgroup}" is not a slice path (/a.slice/a-b.slice, each slice named after its parent)`,
    );
  }
  if (!SLICE_PLACES[req.op]!.includes(placeOf(scope, parts))) {
    const k = "/" + scope.kubepods.join("/");
    return refuse(
      req,
      req.op === "stopSlice"
        ? `"${req.cgroup}" is not below ${k}`
        : `"${req.cgroup}" is outside ${k}${
          req.op === "setSlice" ? " and the reserved cgroups" : ""
        }`,
    );
  }
  const bad = req.op === "setSlice"
    ? badSliceResources(req.resources)
    : undefined;
  return bad === undefined ? undefined : refuse(req, bad);
}

/**
 * Undefined when the request is allowed, else the reason. Paths are absolute and literal:
 * no `..`, no empty components; the executor separately refuses symbolic links.
 */
export function checkRequest(
  scope: AgentScope,
  req: AgentRequest,
): string | undefined {
  // no argument: the agent shares its own root dir, as its plan allows (root_shared.ts)
  if (req.op === "swapController" || req.op === "shareRootDir") {
    return undefined;
  }
  // graceful node shutdown: fixed calls on logind, the lock always the kubelet's delay lock
  if (
    req.op === "logindInhibitDelay" || req.op === "logindReload" ||
    req.op === "logindInhibit" || req.op === "logindWatch"
  ) return undefined;
  if (req.op === "logindWriteInhibitDelay") {
    return Number.isInteger(req.seconds) && req.seconds > 0 &&
        req.seconds <= MAX_INHIBIT_DELAY_SECONDS
      ? undefined
      : refuse(
        req,
        `InhibitDelayMaxSec must be a whole number of seconds from 1 to ${MAX_INHIBIT_DELAY_SECONDS}, not ${req.seconds}`,
      );
  }
  if (
    req.op === "startSlice" || req.op === "setSlice" || req.op === "stopSlice"
  ) return checkSlice(scope, req);
  if (req.op === "statfs") {
    // sizes and free counts of a filesystem only: any absolute, clean path
    const parts = typeof req.path === "string"
      ? req.path.split("/").slice(1)
      : [];
    return typeof req.path === "string" && req.path.startsWith("/") &&
        (req.path === "/" || !badComponents(parts))
      ? undefined
      : refuse(
        req,
        'the path must be absolute, without empty, "." or ".." components',
      );
  }
  if (req.op === "mountVolumeTmpfs" || req.op === "unmountVolumeTmpfs") {
    const why = checkTmpfsTarget(req.target) ??
      (req.op === "mountVolumeTmpfs"
        ? checkTmpfsSize(req.sizeBytes)
        : undefined);
    return why === undefined ? undefined : refuse(req, why);
  }
  if (req.op === "bindSubPath") {
    const why = checkSubPathTarget(req.target) ??
      checkSubPathSource(req.source);
    return why === undefined ? undefined : refuse(req, why);
  }
  if (req.op === "mountLocalBlock" || req.op === "unmountLocalBlock") {
    const why = checkLocalBlockTarget(req.target) ??
      (req.op === "mountLocalBlock"
        ? checkLocalBlockMount(req.mount)
        : undefined);
    return why === undefined ? undefined : refuse(req, why);
  }
  if (req.op === "isBlockDevice") {
    const why = checkLocalBlockMount({
      device: req.device,
      fsType: "",
      readOnly: false,
    });
    return why === undefined ? undefined : refuse(req, why);
  }
  if (req.op === "cleanSubPaths") {
    const why = checkSubPathTarget({
      uid: req.uid,
      volume: "v",
      container: "c",
      index: 0,
    });
    return why === undefined ? undefined : refuse(req, why);
  }
  if (req.op === "kill") {
    if (!Number.isInteger(req.pid) || req.pid <= 1) {
      return refuse(req, `pid ${req.pid} is not a process id above 1`);
    }
    const parts = req.cgroup.split("/").slice(1);
    if (!req.cgroup.startsWith("/") || badComponents(parts)) {
      return refuse(req, `"${req.cgroup}" is not a clean absolute cgroup name`);
    }
    return placeOf(scope, parts) === "below" ? undefined : refuse(
      req,
      `"${req.cgroup}" is not below ${"/" + scope.kubepods.join("/")}`,
    );
  }
  const path = req.path;
  if (typeof path !== "string" || !path.startsWith("/")) {
    return refuse(req, "the path must be absolute");
  }
  // host facts: read-only, a fixed list
  if (
    req.op === "readTextFile" &&
    (FACT_FILES.includes(path) || NR_HUGEPAGES.test(path))
  ) {
    return undefined;
  }
  if (req.op === "readDirNames" && path === HUGEPAGES_DIR) return undefined;
  // the mount itself: its version marker and (v1) hierarchy names
  if (
    (req.op === "exists" || req.op === "readTextFile") &&
    path === `${CGROUP_MOUNT}/cgroup.controllers`
  ) return undefined;
  if (req.op === "readDirNames" && path === CGROUP_MOUNT) return undefined;

  const split = cgroupParts(scope, path);
  if ("error" in split) return refuse(req, split.error);
  const dir = split.cgroup;
  const asDir = placeOf(scope, dir);
  const file = dir.at(-1) ?? "";
  const parent = placeOf(scope, dir.slice(0, -1));
  const where = `"${path}" is outside ${"/" + scope.kubepods.join("/")}`;
  switch (req.op) {
    case "exists":
      if (asDir !== "none") return undefined;
      if (parent === "ancestor") {
        return file === "cgroup.controllers" ? undefined : refuse(req, where);
      }
      return dir.length > 0 && parent !== "none"
        ? undefined
        : refuse(req, where);
    case "readDirNames":
      return asDir === "kubepods" || asDir === "below"
        ? undefined
        : refuse(req, where);
    // a cgroup's creation time: the summary's `pods` and reserved system containers
    case "modifiedMs":
      return asDir === "kubepods" || asDir === "below" || asDir === "reserved"
        ? undefined
        : refuse(req, where);
    case "mkdirs":
      return dir.length > 0 && ["ancestor", "kubepods", "below"].includes(asDir)
        ? undefined
        : refuse(req, where);
    case "rmdir":
      return asDir === "below"
        ? undefined
        : refuse(req, `${where} or is kubepods itself`);
    case "readTextFile":
      if (dir.length === 0) return refuse(req, where);
      if (dir.length === 1 && NODE_USAGE_FILES.has(file)) return undefined;
      if (parent === "ancestor") {
        return READ_ABOVE.has(file) ? undefined : refuse(
          req,
          `above kubepods only ${[...READ_ABOVE].join(", ")} are read`,
        );
      }
      return parent === "none" ? refuse(req, where) : undefined;
    case "writeTextFile": {
      if (dir.length === 0 || parent === "none") return refuse(req, where);
      if (typeof req.text !== "string" || req.text.length > 4096) {
        return refuse(
          req,
          "the text must be a string of at most 4096 characters",
        );
      }
      if (file === "cgroup.subtree_control" && parent !== "reserved") {
        return ENABLE_ONLY.test(req.text) ? undefined : refuse(
          req,
          "cgroup.subtree_control may only enable controllers (+name)",
        );
      }
      if (parent === "ancestor") {
        // v1 cpuset: the cgroup root's directories take their parent's CPUs and nodes
        return CPUSET_FILES.has(file) && dir.length > 1 &&
            CPUSET_VALUE.test(req.text)
          ? undefined
          : refuse(
            req,
            "above kubepods only cgroup.subtree_control (enabling) and, below the top, cpuset.cpus/cpuset.mems are written",
          );
      }
      return SETTING_FILE.test(file)
        ? undefined
        : refuse(req, `"${file}" is not a controller setting file`);
    }
  }
}

/** Parses one request line; the error says what is wrong. */
export function parseRequest(line: string): AgentRequest | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: "the request is not JSON (one object per line)" };
  }
  if (typeof value !== "object" || value === null) {
    return { error: "the request must be a JSON object" };
  }
  const v = value as Record<string, unknown>;
  switch (v.op) {
    case "exists":
    case "readDirNames":
    case "mkdirs":
    case "readTextFile":
    case "rmdir":
    case "modifiedMs":
      return typeof v.path === "string"
        ? { op: v.op, path: v.path }
        : { error: `${v.op} needs "path" (a string)` };
    case "writeTextFile":
      return typeof v.path === "string" && typeof v.text === "string"
        ? { op: v.op, path: v.path, text: v.text }
        : { error: `writeTextFile needs "path" and "text" (strings)` };
    case "kill":
      return typeof v.pid === "number" && typeof v.cgroup === "string"
        ? { op: v.op, pid: v.pid, cgroup: v.cgroup }
        : { error: `kill needs "pid" (a number) and "cgroup" (a string)` };
    case "swapController":
    case "shareRootDir":
    case "logindInhibitDelay":
    case "logindReload":
    case "logindInhibit":
    case "logindWatch":
      return { op: v.op };
    case "logindWriteInhibitDelay":
      return typeof v.seconds === "number"
        ? { op: v.op, seconds: v.seconds }
        : { error: `logindWriteInhibitDelay needs "seconds" (a number)` };
    case "startSlice":
      return typeof v.cgroup === "string"
        ? { op: v.op, cgroup: v.cgroup }
        : { error: `${v.op} needs "cgroup" (a string)` };
    case "stopSlice":
      return typeof v.cgroup === "string"
        ? { op: v.op, cgroup: v.cgroup }
        : { error: `${v.op} needs "cgroup" (a string)` };
    case "setSlice":
      return typeof v.cgroup === "string" && typeof v.resources === "object" &&
          v.resources !== null
        ? {
          op: v.op,
          cgroup: v.cgroup,
          resources: v.resources as SliceResources,
        }
        : {
          error:
            `setSlice needs "cgroup" (a string) and "resources" (an object)`,
        };
    case "statfs":
      return typeof v.path === "string"
        ? { op: v.op, path: v.path }
        : { error: `statfs needs "path" (a string)` };
    case "mountVolumeTmpfs":
    case "unmountVolumeTmpfs": {
      const t = v.target as Record<string, unknown> | null;
      if (
        typeof t !== "object" || t === null || typeof t.uid !== "string" ||
        typeof t.plugin !== "string" || typeof t.name !== "string"
      ) {
        return {
          error: `${v.op} needs "target": {"uid", "plugin", "name"} (strings)`,
        };
      }
      const target = { uid: t.uid, plugin: t.plugin, name: t.name };
      if (v.op === "unmountVolumeTmpfs") return { op: v.op, target };
      return typeof v.sizeBytes === "number"
        ? { op: v.op, target, sizeBytes: v.sizeBytes }
        : { error: `mountVolumeTmpfs needs "sizeBytes" (a number)` };
    }
    case "mountLocalBlock":
    case "unmountLocalBlock": {
      const t = v.target as Record<string, unknown> | null;
      if (
        typeof t !== "object" || t === null || typeof t.uid !== "string" ||
        typeof t.pv !== "string"
      ) {
        return { error: `${v.op} needs "target": {"uid", "pv"} (strings)` };
      }
      const target = { uid: t.uid, pv: t.pv };
      if (v.op === "unmountLocalBlock") return { op: v.op, target };
      const m = v.mount as Record<string, unknown> | null;
      if (
        typeof m !== "object" || m === null || typeof m.device !== "string" ||
        typeof m.fsType !== "string" || typeof m.readOnly !== "boolean"
      ) {
        return {
          error:
            `mountLocalBlock needs "mount": {"device", "fsType" (strings), "readOnly" (a boolean)}`,
        };
      }
      return {
        op: v.op,
        target,
        mount: { device: m.device, fsType: m.fsType, readOnly: m.readOnly },
      };
    }
    case "isBlockDevice":
      return typeof v.device === "string"
        ? { op: v.op, device: v.device }
        : { error: `isBlockDevice needs "device" (a string)` };
    case "bindSubPath": {
      const t = v.target as Record<string, unknown> | null;
      const src = v.source as Record<string, unknown> | null;
      if (
        typeof t !== "object" || t === null || typeof t.uid !== "string" ||
        typeof t.volume !== "string" || typeof t.container !== "string" ||
        typeof t.index !== "number" || typeof src !== "object" ||
        src === null || typeof src.volumePath !== "string" ||
        typeof src.path !== "string"
      ) {
        return {
          error:
            `bindSubPath needs "target": {"uid", "volume", "container" (strings), "index" (a number)} and "source": {"volumePath", "path"} (strings)`,
        };
      }
      return {
        op: v.op,
        target: {
          uid: t.uid,
          volume: t.volume,
          container: t.container,
          index: t.index,
        },
        source: { volumePath: src.volumePath, path: src.path },
      };
    }
    case "cleanSubPaths":
      return typeof v.uid === "string"
        ? { op: v.op, uid: v.uid }
        : { error: `cleanSubPaths needs "uid" (a string)` };
    default:
      return {
        error: `unknown op ${
          JSON.stringify(v.op)
        }; one of exists, modifiedMs, readDirNames, mkdirs, readTextFile, writeTextFile, rmdir, kill, swapController, startSlice, setSlice, stopSlice, statfs, mountVolumeTmpfs, unmountVolumeTmpfs, mountLocalBlock, unmountLocalBlock, isBlockDevice, bindSubPath, cleanSubPaths, shareRootDir, logindInhibitDelay, logindWriteInhibitDelay, logindReload, logindInhibit, logindWatch`,
      };
  }
}
