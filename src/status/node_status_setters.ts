/**
 * Node status computation (upstream `pkg/kubelet/nodestatus/setters.go`), as one pure
 * function of the previous status, the host and runtime facts and the time: addresses,
 * capacity and allocatable, nodeInfo, daemon endpoints, and the pressure and Ready
 * conditions with heartbeat and transition times.
 * @module
 */
import type {
  NodeAddress,
  NodeCondition,
  NodeStatus,
  NodeSystemInfo,
} from "../api/mod.ts";
import { isExtendedResourceName } from "../util/resource_names.ts";

/** A CRI `RuntimeCondition` as the node status reads it. */
export interface RuntimeConditionFact {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

/** A runtime handler and its features, as CRI `Status` reports it. */
export interface RuntimeHandlerFact {
  name: string;
  recursiveReadOnlyMounts: boolean;
  userNamespaces: boolean;
}

/** One CRI `Status` answer as node status reads it. */
export interface RuntimeStatusFact {
  conditions: RuntimeConditionFact[];
  /** The runtime handlers (none from a runtime older than the field). */
  handlers: RuntimeHandlerFact[];
  /** The runtime's features; absent when it reports none. */
  features?: { supplementalGroupsPolicy: boolean };
}

/** Everything the status setters read, gathered by the caller. */
export interface NodeFacts {
  /** `kubernetes.io/hostname` and the Hostname address. */
  hostname: string;
  /** InternalIP addresses (from `--node-ip` or discovery); empty → only Hostname. */
  nodeIPs: string[];
  cpuCores: number;
  memoryBytes: number;
  /** Capacity of the filesystem holding `--root-dir`; undefined when unknown. */
  ephemeralStorageBytes?: number;
  maxPods: number;
  /** The machine's huge page sizes and page counts (`hugepages-<size>` resources). */
  hugepages?: { pageBytes: number; pages: number }[];
  /** Subtracted from capacity for allocatable (reserved + hard eviction), per resource. */
  reserved?: {
    memoryBytes?: number;
    ephemeralStorageBytes?: number;
    cpuMillis?: number;
  };
  nodeInfo: Omit<
    NodeSystemInfo,
    "containerRuntimeVersion" | "kubeProxyVersion"
  >;
  /** `<runtimeName>://<runtimeVersion>`; empty while unknown. */
  containerRuntimeVersion: string;
  kubeletPort: number;
  /**
   * The last CRI `Status` conditions; undefined when no status check succeeded yet
   * (`container runtime status check may not have completed yet`).
   */
  runtimeConditions?: RuntimeConditionFact[];
  /**
   * The handlers and features of the last `Status` answer with the runtime ready (upstream
   * `runtimeState`); absent before one.
   */
  runtimeHandlers?: RuntimeHandlerFact[];
  runtimeFeatures?: { supplementalGroupsPolicy: boolean };
  /** Set when the runtime has not answered `Status` for too long. */
  runtimeDown?: boolean;
  /** Set while the node shuts down gracefully (upstream's shutdown manager status). */
  shutdownError?: string;
  /** The runtime's images (CRI `ListImages`); undefined → not reported. */
  images?: ImageFact[];
  /** `nodeStatusMaxImages` (default 50; -1 lists all). */
  maxImages?: number;
  /** The pressure conditions the eviction manager holds true now (none when absent). */
  pressure?: readonly string[];
  /** Device plugin resources (upstream `GetCapacity`): device counts per resource. */
  devicePlugins?: {
    capacity: Record<string, number>;
    allocatable: Record<string, number>;
    /** Resources whose plugin is gone past the grace period. */
    removed: readonly string[];
  };
}

/** One runtime image as node status reads it. */
export interface ImageFact {
  repoDigests: string[];
  repoTags: string[];
  sizeBytes: number;
}

/** Upstream `MaxNamesPerImageInNodeStatus`. */
export const MAX_NAMES_PER_IMAGE = 5;

/**
 * Upstream `Images` setter: largest images first, at most `maxImages` of them (-1: all),
 * each named by its digests then its tags, at most 5 names.
 */
export function nodeImages(
  images: ImageFact[],
  maxImages = 50,
): { names: string[]; sizeBytes: number }[] {
  const sorted = [...images].sort((a, b) => b.sizeBytes - a.sizeBytes);
  const kept = maxImages > -1 ? sorted.slice(0, maxImages) : sorted;
  return kept.map((image) => ({
    names: [...image.repoDigests, ...image.repoTags].slice(
      0,
      MAX_NAMES_PER_IMAGE,
    ),
    sizeBytes: image.sizeBytes,
  }));
}

const KI = 1024;
const BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/**
 * A byte count as Kubernetes prints a BinarySI quantity: the largest power of 1024 that
 * divides it exactly, e.g. 8343990272 → "8148428Ki", 1073741824 → "1Gi".
 */
export function formatBinaryQuantity(bytes: number): string {
  let value = Math.max(0, Math.floor(bytes));
  let i = 0;
  while (value !== 0 && value % KI === 0 && i < BINARY_SUFFIXES.length - 1) {
    value /= KI;
    i++;
  }
  return `${value}${BINARY_SUFFIXES[i]}`;
}

function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Upstream `NodeAddress` without a cloud provider: the node IPs, then the hostname. */
export function nodeAddresses(facts: NodeFacts): NodeAddress[] {
  const out: NodeAddress[] = facts.nodeIPs.map((address) => ({
    type: "InternalIP" as const,
    address,
  }));
  out.push({ type: "Hostname", address: facts.hostname });
  return out;
}

/** Upstream `MachineInfo`: capacity, and allocatable = capacity − reservations (≥ 0). */
export function nodeResources(
  facts: NodeFacts,
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const reserved = facts.reserved ?? {};
  const cpuMillis = facts.cpuCores * 1000;
  const capacity: Record<string, string> = {
    cpu: formatCpu(cpuMillis),
    memory: formatBinaryQuantity(facts.memoryBytes),
    pods: String(facts.maxPods),
  };
  const allocatable: Record<string, string> = {
    cpu: formatCpu(Math.max(0, cpuMillis - (reserved.cpuMillis ?? 0))),
    memory: formatBinaryQuantity(
      facts.memoryBytes - (reserved.memoryBytes ?? 0),
    ),
    pods: String(facts.maxPods),
  };
  if (facts.ephemeralStorageBytes !== undefined) {
    capacity["ephemeral-storage"] = formatBinaryQuantity(
      facts.ephemeralStorageBytes,
    );
    allocatable["ephemeral-storage"] = formatBinaryQuantity(
      facts.ephemeralStorageBytes - (reserved.ephemeralStorageBytes ?? 0),
    );
  }
  // every size the machine supports, 0 when none are reserved (upstream, from cAdvisor)
  for (const { pageBytes, pages } of facts.hugepages ?? []) {
    const name = `hugepages-${formatBinaryQuantity(pageBytes)}`;
    capacity[name] = allocatable[name] = formatBinaryQuantity(
      pageBytes * pages,
    );
  }
  // device plugin resources: allocatable counts the healthy devices; a resource whose
  // plugin is gone past its grace period is reported once as 0 (then kept from the Node)
  const devices = facts.devicePlugins;
  for (const [name, count] of Object.entries(devices?.capacity ?? {})) {
    capacity[name] = String(count);
    allocatable[name] = String(devices?.allocatable[name] ?? 0);
  }
  for (const name of devices?.removed ?? []) {
    capacity[name] = allocatable[name] = "0";
  }
  return { capacity, allocatable };
}

/**
 * Upstream `MachineInfo` edits the Node it read rather than building a new status: a capacity
 * entry the kubelet does not compute itself (an extended resource someone patched in with
 * `--subresource=status`) stays, and allocatable follows it; an extended resource gone from
 * capacity leaves allocatable too.
 */
export function keepPatchedResources(
  previous: NodeStatus | undefined,
  own: {
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
  },
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity = { ...previous?.capacity, ...own.capacity };
  const allocatable: Record<string, string> = {};
  for (const [name, value] of Object.entries(previous?.allocatable ?? {})) {
    if (name in capacity || !isExtendedResourceName(name)) {
      allocatable[name] = value;
    }
  }
  for (const [name, value] of Object.entries(capacity)) {
    allocatable[name] = own.allocatable[name] ?? value;
  }
  return { capacity, allocatable };
}

/** Upstream `ReadyCondition` errors: runtime, network, node shutdown, missing capacity. */
export function readinessErrors(
  facts: NodeFacts,
  capacity: Record<string, string>,
): string[] {
  const errors: string[] = [];
  const conditions = facts.runtimeConditions;
  if (conditions === undefined) {
    errors.push("container runtime status check may not have completed yet");
  } else if (facts.runtimeDown) {
    errors.push("container runtime is down");
  } else {
    const describe = (c: RuntimeConditionFact | undefined, type: string) =>
      c
        ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}`
        : `${type}=false reason: message:`;
    const runtime = conditions.find((c) => c.type === "RuntimeReady");
    if (!runtime?.status) {
      errors.push(
        `container runtime not ready: ${describe(runtime, "RuntimeReady")}`,
      );
    }
    const network = conditions.find((c) => c.type === "NetworkReady");
    if (!network?.status) {
      errors.push(
        `container runtime network not ready: ${
          describe(network, "NetworkReady")
        }`,
      );
    }
  }
  if (facts.shutdownError) errors.push(facts.shutdownError);
  const required = ["cpu", "memory", "pods"];
  if (facts.ephemeralStorageBytes !== undefined) {
    required.push("ephemeral-storage");
  }
  const missing = required.filter((r) => !capacity[r]);
  if (missing.length) {
    errors.push(`Missing node capacity for resources: ${missing.join(", ")}`);
  }
  return errors;
}

/** RFC 3339 with seconds, as metav1.Time serialises. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(
    ".000Z",
    "Z",
  );
}

function condition(
  previous: NodeCondition[] | undefined,
  next: Omit<NodeCondition, "lastHeartbeatTime" | "lastTransitionTime">,
  now: string,
): NodeCondition {
  const old = previous?.find((c) => c.type === next.type);
  const transition = old && old.status === next.status && old.lastTransitionTime
    ? old.lastTransitionTime
    : now;
  return { ...next, lastHeartbeatTime: now, lastTransitionTime: transition };
}

/**
 * The node status the kubelet reports now. Condition transition times carry over from
 * `previous` while the condition's status is unchanged.
 */
export function computeNodeStatus(
  previous: NodeStatus | undefined,
  facts: NodeFacts,
  nowMs: number,
): NodeStatus {
  const now = rfc3339Seconds(nowMs);
  const { capacity, allocatable } = keepPatchedResources(
    previous,
    nodeResources(facts),
  );
  const errors = readinessErrors(facts, capacity);
  const prev = previous?.conditions;
  const pressure = facts.pressure ?? [];
  const conditions: NodeCondition[] = [
    condition(
      prev,
      pressure.includes("MemoryPressure")
        ? {
          type: "MemoryPressure",
          status: "True",
          reason: "KubeletHasInsufficientMemory",
          message: "kubelet has insufficient memory available",
        }
        : {
          type: "MemoryPressure",
          status: "False",
          reason: "KubeletHasSufficientMemory",
          message: "kubelet has sufficient memory available",
        },
      now,
    ),
    condition(
      prev,
      pressure.includes("DiskPressure")
        ? {
          type: "DiskPressure",
          status: "True",
          reason: "KubeletHasDiskPressure",
          message: "kubelet has disk pressure",
        }
        : {
          type: "DiskPressure",
          status: "False",
          reason: "KubeletHasNoDiskPressure",
          message: "kubelet has no disk pressure",
        },
      now,
    ),
    condition(
      prev,
      pressure.includes("PIDPressure")
        ? {
          type: "PIDPressure",
          status: "True",
          reason: "KubeletHasInsufficientPID",
          message: "kubelet has insufficient PID available",
        }
        : {
          type: "PIDPressure",
          status: "False",
          reason: "KubeletHasSufficientPID",
          message: "kubelet has sufficient PID available",
        },
      now,
    ),
    condition(
      prev,
      errors.length === 0
        ? {
          type: "Ready",
          status: "True",
          reason: "KubeletReady",
          message: "kubelet is posting ready status",
        }
        : {
          type: "Ready",
          status: "False",
          reason: "KubeletNotReady",
          message: errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`,
        },
      now,
    ),
  ];
  return {
    capacity,
    allocatable,
    conditions,
    addresses: nodeAddresses(facts),
    daemonEndpoints: { kubeletEndpoint: { Port: facts.kubeletPort } },
    nodeInfo: {
      ...facts.nodeInfo,
      containerRuntimeVersion: facts.containerRuntimeVersion,
      kubeProxyVersion: "",
    },
    ...(facts.images
      ? { images: nodeImages(facts.images, facts.maxImages ?? 50) }
      : previous?.images
      ? { images: previous.images }
      : {}),
    // upstream's RuntimeHandlers and NodeFeatures setters (their gates are on by default); an
    // empty handler list is left out, as the API's omitempty leaves it out
    ...(facts.runtimeHandlers?.length
      ? {
        runtimeHandlers: facts.runtimeHandlers.map((h) => ({
          name: h.name,
          features: {
            recursiveReadOnlyMounts: h.recursiveReadOnlyMounts,
            userNamespaces: h.userNamespaces,
          },
        })),
      }
      : {}),
    ...(facts.runtimeFeatures
      ? {
        features: {
          supplementalGroupsPolicy:
            facts.runtimeFeatures.supplementalGroupsPolicy,
        },
      }
      : {}),
  };
}
