/**
 * Gathers the facts node status is computed from: host facts through Deno's `--allow-sys`
 * APIs and a few files (machine ID, OS image; boot ID and system UUID only when readable),
 * filesystem capacity by `statfs` of the root directory, and the container runtime's
 * version and readiness from CRI `Version`/`Status` (upstream `updateRuntimeUp`).
 * @module
 */
import { statfs } from "node:fs/promises";
import {
  cgroupAgentSocket,
  type CgroupTreeFs,
  denoCgroupTreeFs,
  openCgroupAgentClient,
} from "../cgroup_agent/mod.ts";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { parseQuantity } from "../util/quantity.ts";
import type {
  ImageFact,
  NodeFacts,
  RuntimeConditionFact,
  RuntimeHandlerFact,
  RuntimeStatusFact,
} from "./node_status_setters.ts";
import { goArch } from "./node_registration.ts";
import { errorMessage } from "../util/error_message.ts";

/** The CRI calls node status needs, shaped by their consumer. */
export interface NodeRuntime {
  /** CRI `ListImages`; omitted → no images in node status. */
  images?(signal: AbortSignal): Promise<ImageFact[]>;
  version(
    signal: AbortSignal,
  ): Promise<{ runtimeName: string; runtimeVersion: string }>;
  status(signal: AbortSignal): Promise<RuntimeStatusFact>;
}

/** Host effects, injectable for tests. */
export interface HostProbe {
  readTextFile(path: string): Promise<string>;
  networkInterfaces(): { address: string; family: string; name: string }[];
  memoryBytes(): number;
  cpuCores(): number;
  kernelVersion(): string;
  /** Total bytes of the filesystem holding `path`. */
  filesystemBytes(path: string): Promise<number>;
  /** The huge page sizes the machine supports and how many pages of each it holds. */
  hugepages?(): Promise<HugepagePool[]>;
}

/** One huge page size of the machine (a /sys/kernel/mm/hugepages entry). */
export interface HugepagePool {
  pageBytes: number;
  pages: number;
}

const HUGEPAGES_DIR = "/sys/kernel/mm/hugepages";

/** Every /sys/kernel/mm/hugepages/hugepages-<kB>kB with its nr_hugepages, read through `fs`. */
export async function readHugepagesFrom(
  fs: Pick<CgroupTreeFs, "readDirNames" | "readTextFile">,
): Promise<HugepagePool[]> {
  const pools: HugepagePool[] = [];
  for (const name of await fs.readDirNames(HUGEPAGES_DIR)) {
    const m = /^hugepages-(\d+)kB$/.exec(name);
    if (!m) continue;
    const pages = await fs.readTextFile(
      `${HUGEPAGES_DIR}/${name}/nr_hugepages`,
    );
    pools.push({ pageBytes: Number(m[1]) * 1024, pages: Number(pages.trim()) });
  }
  return pools.sort((a, b) => a.pageBytes - b.pageBytes);
}

const readHugepages = () => readHugepagesFrom(denoCgroupTreeFs);

/**
 * The real host for a kubelet that may lack every permission: when /sys cannot be read
 * directly, the hugepage pools come through the cgroup agent at `<rootDir>/cgroup-agent.sock`
 * (docs/permissions.md, "The cgroup agent"); without it the direct read's error stands.
 */
export function hostProbeFor(rootDir: string): HostProbe {
  return {
    ...denoHost,
    async hugepages() {
      try {
        return await readHugepages();
      } catch (error) {
        const opened = await openCgroupAgentClient(cgroupAgentSocket(rootDir));
        if (!("client" in opened)) throw error;
        try {
          return await readHugepagesFrom(opened.client.fs);
        } finally {
          opened.client.close();
        }
      }
    },
  };
}

/** The real host. */
export const denoHost: HostProbe = {
  readTextFile: (path) => Deno.readTextFile(path),
  networkInterfaces: () => Deno.networkInterfaces(),
  memoryBytes: () => Deno.systemMemoryInfo().total,
  cpuCores: () => navigator.hardwareConcurrency,
  kernelVersion: () => Deno.osRelease(),
  hugepages: readHugepages,
  filesystemBytes: async (path) => {
    // The root directory may not exist yet: use the nearest existing ancestor's filesystem.
    for (let p = path;;) {
      try {
        const s = await statfs(p);
        return Number(s.blocks) * Number(s.bsize);
      } catch (e) {
        const parent = p.slice(0, p.lastIndexOf("/")) || "/";
        if (
          parent === p ||
          !(e instanceof Error && "code" in e && e.code === "ENOENT")
        ) {
          throw e;
        }
        p = parent;
      }
    }
  },
};

/** Options of {@linkcode createNodeFacts}. */
export interface NodeFactsOptions {
  hostname: string;
  /** `--node-ip` (comma-separated, at most one per family). */
  nodeIP?: string;
  /** `--root-dir`, whose filesystem is the node's ephemeral storage. */
  rootDir: string;
  maxPods: number;
  kubeletPort: number;
  kubeletVersion: string;
  evictionHard?: Record<string, string>;
  kubeReserved?: Record<string, string>;
  systemReserved?: Record<string, string>;
  /** `nodeStatusMaxImages` (default 50; -1: all). */
  maxImages?: number;
  /** Runtime counts as down after this long without a successful Status (default 30 s). */
  runtimeDownAfterMs?: number;
}

function isLoopback(ip: string): boolean {
  return ip.startsWith("127.") || ip === "::1";
}

/**
 * The node's InternalIPs (upstream `validateNodeIP` and the no-cloud address rules): the
 * `--node-ip` values that are on a local interface and not loopback; without `--node-ip`,
 * the first non-loopback, non-link-local IPv4 interface address. No DNS lookup is made.
 */
export function resolveNodeIPs(
  nodeIP: string | undefined,
  interfaces: { address: string; family: string }[],
): { ips: string[]; errors: string[] } {
  const local = new Set(interfaces.map((i) => i.address));
  const wanted = (nodeIP ?? "").split(",").map((s) => s.trim()).filter((s) =>
    s !== "" && s !== "0.0.0.0" && s !== "::"
  );
  if (wanted.length) {
    const ips: string[] = [];
    const errors: string[] = [];
    for (const ip of wanted) {
      if (isLoopback(ip)) errors.push(`nodeIP can't be loopback address`);
      else if (!local.has(ip)) {
        errors.push(
          `node IP: "${ip}" not found in the host's network interfaces`,
        );
      } else ips.push(ip);
    }
    return { ips, errors };
  }
  const found = interfaces.find((i) =>
    i.family === "IPv4" && !isLoopback(i.address) &&
    !i.address.startsWith("169.254.")
  );
  return { ips: found ? [found.address] : [], errors: [] };
}

const SEMVER_REGEXP =
  /^\s*v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?\s*$/;
const GENERIC_VERSION_REGEXP = /^\s*v?(\d+(?:\.\d+)+)/;

/**
 * The runtime version as upstream prints it in `containerRuntimeVersion`
 * (kuberuntime `newRuntimeVersion`: a semantic version when it parses as one, else the
 * leading dotted numbers, so containerd's "1.6.20~ds1" reads "1.6.20"). Other text is kept.
 */
export function normalizeRuntimeVersion(version: string): string {
  const sem = SEMVER_REGEXP.exec(version);
  if (sem) {
    return `${Number(sem[1])}.${Number(sem[2])}.${Number(sem[3])}${
      sem[4] ?? ""
    }${sem[5] ?? ""}`;
  }
  const generic = GENERIC_VERSION_REGEXP.exec(version);
  return generic ? generic[1]!.split(".").map(Number).join(".") : version;
}

/** `PRETTY_NAME` of an os-release file, cAdvisor's OS image. */
export function osImage(osRelease: string | undefined): string {
  const m = /^PRETTY_NAME=(.*)$/m.exec(osRelease ?? "");
  if (!m) return "Linux";
  return m[1]!.trim().replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1");
}

/** Bytes of a threshold or reservation value ("100Mi" or "10%" of `capacity`). */
export function thresholdBytes(
  value: string | undefined,
  capacity: number,
): number {
  if (!value) return 0;
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  // Upstream keeps the percentage as a float32 and truncates the product
  // (eviction `GetThresholdQuantity`), so 1 % of a disk is not exactly 1 %.
  if (pct) return Math.trunc(capacity * Math.fround(Number(pct[1]) / 100));
  try {
    return parseQuantity(value.trim()).value;
  } catch {
    return 0;
  }
}

function cpuMillis(value: string | undefined): number {
  if (!value) return 0;
  try {
    return Math.round(parseQuantity(value.trim()).value * 1000);
  } catch {
    return 0;
  }
}

/** The host's identity fields of nodeInfo, read once. */
async function readHostIdentity(
  host: HostProbe,
): Promise<
  { machineID: string; systemUUID: string; bootID: string; osImage: string }
> {
  const read = (path: string) =>
    host.readTextFile(path).then((t) => t.trim(), () => "");
  const machineID = await read("/etc/machine-id");
  return {
    machineID,
    // Without a DMI product UUID the upstream kubelet was seen reporting the
    // machine ID as the system UUID; do the same.
    systemUUID: (await read("/sys/class/dmi/id/product_uuid")) || machineID,
    bootID: await read("/proc/sys/kernel/random/boot_id"),
    osImage: osImage(await read("/etc/os-release")),
  };
}

/**
 * The runtime's version (asked until known) and readiness (asked every round), with
 * upstream `updateRuntimeUp`'s rule: down after `downAfterMs` without a good answer.
 */
class RuntimeReadiness {
  #deps: { runtime: NodeRuntime; clock: Clock; logger: Logger };
  #downAfterMs: number;
  version = "";
  conditions: RuntimeConditionFact[] | undefined;
  handlers: RuntimeHandlerFact[] | undefined;
  features: { supplementalGroupsPolicy: boolean } | undefined;
  images: ImageFact[] | undefined;
  #lastOk = -Infinity;

  constructor(
    deps: { runtime: NodeRuntime; clock: Clock; logger: Logger },
    downAfterMs: number,
  ) {
    this.#deps = deps;
    this.#downAfterMs = downAfterMs;
  }

  get down(): boolean {
    return this.conditions !== undefined &&
      this.#deps.clock.now() - this.#lastOk > this.#downAfterMs;
  }

  async refresh(signal: AbortSignal): Promise<void> {
    const { runtime, clock, logger } = this.#deps;
    if (!this.version) {
      try {
        const v = await runtime.version(signal);
        this.version = `${v.runtimeName}://${
          normalizeRuntimeVersion(v.runtimeVersion)
        }`;
      } catch (e) {
        logger.v(2).info("Container runtime version not known yet", {
          err: errorMessage(e),
        });
      }
    }
    try {
      const status = await runtime.status(signal);
      this.conditions = status.conditions;
      this.#lastOk = clock.now();
      // upstream keeps the handlers and features of a ready runtime's answer only
      if (
        status.conditions.some((c) => c.type === "RuntimeReady" && c.status)
      ) {
        this.handlers = status.handlers;
        this.features = status.features;
      }
    } catch (e) {
      logger.error("Container runtime status check failed", {
        err: errorMessage(e),
      });
    }
    if (!runtime.images) return;
    try {
      this.images = await runtime.images(signal);
    } catch (e) {
      // Upstream keeps the last list when the image list fails.
      logger.error("Cannot list the runtime's images for node status", {
        err: errorMessage(e),
      });
    }
  }
}

/** What allocatable leaves out: kube- and system-reserved plus the hard eviction threshold. */
function reservations(
  options: NodeFactsOptions,
  memoryBytes: number,
  storageBytes: number | undefined,
): NonNullable<NodeFacts["reserved"]> {
  const reserve = (resource: string, capacity: number, signal: string) =>
    thresholdBytes(options.kubeReserved?.[resource], capacity) +
    thresholdBytes(options.systemReserved?.[resource], capacity) +
    thresholdBytes(options.evictionHard?.[signal], capacity);
  return {
    memoryBytes: reserve("memory", memoryBytes, "memory.available"),
    ...(storageBytes !== undefined
      ? {
        ephemeralStorageBytes: reserve(
          "ephemeral-storage",
          storageBytes,
          "nodefs.available",
        ),
      }
      : {}),
    cpuMillis: cpuMillis(options.kubeReserved?.cpu) +
      cpuMillis(options.systemReserved?.cpu),
  };
}

/** Builds the facts source the node status reporter calls each round. */
export function createNodeFacts(
  deps: {
    runtime: NodeRuntime;
    clock: Clock;
    logger: Logger;
    host?: HostProbe;
    /** The eviction manager's pressure conditions (read at each status update). */
    pressure?: () => readonly string[];
  },
  options: NodeFactsOptions,
): (signal: AbortSignal) => Promise<NodeFacts> {
  const host = deps.host ?? hostProbeFor(options.rootDir);
  let identity: ReturnType<typeof readHostIdentity> | undefined;
  // Read once, as upstream reads the machine info once. /sys opens need every permission or
  // the cgroup agent (docs/permissions.md): without both no hugepages-* resources are reported.
  let hugepages: Promise<HugepagePool[]> | undefined;
  const runtime = new RuntimeReadiness(
    deps,
    options.runtimeDownAfterMs ?? 30_000,
  );
  let loggedAddressErrors = false;
  return async (signal) => {
    identity ??= readHostIdentity(host);
    const info = await identity;
    hugepages ??= host.hugepages?.().catch(() => []) ?? Promise.resolve([]);
    const pools = await hugepages;
    await runtime.refresh(signal);
    const addresses = resolveNodeIPs(options.nodeIP, host.networkInterfaces());
    if (addresses.errors.length && !loggedAddressErrors) {
      loggedAddressErrors = true;
      deps.logger.error("Failed to set node addresses", {
        err: addresses.errors.join("; "),
      });
    }
    const memoryBytes = host.memoryBytes();
    const storage = await host.filesystemBytes(options.rootDir).catch(() =>
      undefined
    );
    return {
      hostname: options.hostname,
      nodeIPs: addresses.ips,
      cpuCores: host.cpuCores(),
      memoryBytes,
      maxPods: options.maxPods,
      reserved: reservations(options, memoryBytes, storage),
      nodeInfo: {
        ...info,
        kernelVersion: host.kernelVersion(),
        kubeletVersion: options.kubeletVersion,
        operatingSystem: "linux",
        architecture: goArch(Deno.build.arch),
      },
      containerRuntimeVersion: runtime.version,
      kubeletPort: options.kubeletPort,
      ...(storage !== undefined ? { ephemeralStorageBytes: storage } : {}),
      ...(pools.length ? { hugepages: pools } : {}),
      ...(runtime.conditions ? { runtimeConditions: runtime.conditions } : {}),
      ...(runtime.handlers ? { runtimeHandlers: runtime.handlers } : {}),
      ...(runtime.features ? { runtimeFeatures: runtime.features } : {}),
      ...(runtime.images ? { images: runtime.images } : {}),
      ...(options.maxImages !== undefined
        ? { maxImages: options.maxImages }
        : {}),
      runtimeDown: runtime.down,
      ...(deps.pressure ? { pressure: deps.pressure() } : {}),
    };
  };
}
