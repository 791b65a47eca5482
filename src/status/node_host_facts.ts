/**
 * Gathers the facts node status is computed from: host facts through Deno's `--allow-sys`
 * APIs and a few files (machine ID, OS image; boot ID and system UUID only when readable),
 * filesystem capacity by `statfs` of the root directory, and the container runtime's
 * version and readiness from CRI `Version`/`Status` (upstream `updateRuntimeUp`).
 * @module
 */
import { statfs } from "node:fs/promises";
import type { Clock } from "../clock/mod.ts";
import type { Logger } from "../log/mod.ts";
import { parseQuantity } from "../util/quantity.ts";
import type { NodeFacts, RuntimeConditionFact } from "./node_status_setters.ts";
import { goArch } from "./node_registration.ts";

/** The CRI calls node status needs, shaped by their consumer. */
export interface NodeRuntime {
  version(
    signal: AbortSignal,
  ): Promise<{ runtimeName: string; runtimeVersion: string }>;
  status(signal: AbortSignal): Promise<RuntimeConditionFact[]>;
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
}

/** The real host. */
export const denoHost: HostProbe = {
  readTextFile: (path) => Deno.readTextFile(path),
  networkInterfaces: () => Deno.networkInterfaces(),
  memoryBytes: () => Deno.systemMemoryInfo().total,
  cpuCores: () => navigator.hardwareConcurrency,
  kernelVersion: () => Deno.osRelease(),
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

/** Builds the facts source the node status reporter calls each round. */
export function createNodeFacts(
  deps: {
    runtime: NodeRuntime;
    clock: Clock;
    logger: Logger;
    host?: HostProbe;
  },
  options: NodeFactsOptions,
): (signal: AbortSignal) => Promise<NodeFacts> {
  const host = deps.host ?? denoHost;
  const readOptional = (path: string) =>
    host.readTextFile(path).then((t) => t.trim(), () => "");
  let statics:
    | Promise<
      { machineID: string; systemUUID: string; bootID: string; osImage: string }
    >
    | undefined;
  let runtimeVersion = "";
  let conditions: RuntimeConditionFact[] | undefined;
  let lastRuntimeOk = -Infinity;
  let loggedAddressErrors = false;
  return async (signal) => {
    statics ??= (async () => {
      const machineID = await readOptional("/etc/machine-id");
      return {
        machineID,
        // Without a DMI product UUID the upstream kubelet was seen reporting the
        // machine ID as the system UUID; do the same.
        systemUUID: (await readOptional("/sys/class/dmi/id/product_uuid")) ||
          machineID,
        bootID: await readOptional("/proc/sys/kernel/random/boot_id"),
        osImage: osImage(await readOptional("/etc/os-release")),
      };
    })();
    const info = await statics;
    if (!runtimeVersion) {
      try {
        const v = await deps.runtime.version(signal);
        runtimeVersion = `${v.runtimeName}://${
          normalizeRuntimeVersion(v.runtimeVersion)
        }`;
      } catch (e) {
        deps.logger.v(2).info("Container runtime version not known yet", {
          err: e instanceof Error ? e.message : String(e),
        });
      }
    }
    try {
      conditions = await deps.runtime.status(signal);
      lastRuntimeOk = deps.clock.now();
    } catch (e) {
      deps.logger.error("Container runtime status check failed", {
        err: e instanceof Error ? e.message : String(e),
      });
    }
    const addresses = resolveNodeIPs(options.nodeIP, host.networkInterfaces());
    if (addresses.errors.length && !loggedAddressErrors) {
      loggedAddressErrors = true;
      deps.logger.error("Failed to set node addresses", {
        err: addresses.errors.join("; "),
      });
    }
    const memoryBytes = host.memoryBytes();
    let storage: number | undefined;
    try {
      storage = await host.filesystemBytes(options.rootDir);
    } catch {
      storage = undefined;
    }
    const reserve = (resource: string, capacity: number) =>
      thresholdBytes(options.kubeReserved?.[resource], capacity) +
      thresholdBytes(options.systemReserved?.[resource], capacity);
    const facts: NodeFacts = {
      hostname: options.hostname,
      nodeIPs: addresses.ips,
      cpuCores: host.cpuCores(),
      memoryBytes,
      maxPods: options.maxPods,
      reserved: {
        memoryBytes: reserve("memory", memoryBytes) +
          thresholdBytes(
            options.evictionHard?.["memory.available"],
            memoryBytes,
          ),
        ...(storage !== undefined
          ? {
            ephemeralStorageBytes: reserve("ephemeral-storage", storage) +
              thresholdBytes(
                options.evictionHard?.["nodefs.available"],
                storage,
              ),
          }
          : {}),
        cpuMillis: cpuMillis(options.kubeReserved?.cpu) +
          cpuMillis(options.systemReserved?.cpu),
      },
      nodeInfo: {
        ...info,
        kernelVersion: host.kernelVersion(),
        kubeletVersion: options.kubeletVersion,
        operatingSystem: "linux",
        architecture: goArch(Deno.build.arch),
      },
      containerRuntimeVersion: runtimeVersion,
      kubeletPort: options.kubeletPort,
      ...(storage !== undefined ? { ephemeralStorageBytes: storage } : {}),
      ...(conditions ? { runtimeConditions: conditions } : {}),
      runtimeDown: conditions !== undefined &&
        deps.clock.now() - lastRuntimeOk >
          (options.runtimeDownAfterMs ?? 30_000),
    };
    return facts;
  };
}
