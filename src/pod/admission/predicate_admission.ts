/**
 * The kubelet's predicate admission (upstream `lifecycle/predicate.go` with the scheduler's
 * `AdmissionCheck`): whether a new pod fits this node next to the pods already admitted.
 * Checks, in upstream's order, the first failure winning:
 *
 * 1. the Node is known (`InvalidNodeInfo`);
 * 2. the pod's `kubernetes.io/os` label and `spec.os` match the node (`PodOSSelectorNodeLabelDoesNotMatch`,
 *    `PodOSNotSupported`);
 * 3. resources against the Node's allocatable: pod count (`OutOfpods`), cpu, memory and
 *    ephemeral-storage requests (`OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage`), then
 *    the scalar ones (`OutOf<name>`: extended resources such as `example.com/foo`, hugepages);
 *    an extended resource the node does not list at all is not checked (upstream
 *    `removeMissingExtendedResources`: it may be a cluster-level resource);
 * 4. `nodeSelector` and required node affinity (`NodeAffinity`), `spec.nodeName` (`NodeName`),
 *    host ports (`NodePorts`);
 * 5. untolerated `NoExecute` taints, except for static pods (`TaintToleration`).
 *
 * Pure: the node and the other pods are passed in.
 * @module
 */
import type { Node, Taint } from "../../api/mod.ts";
import { podRequests } from "../cgroups/pod_resources.ts";
import { isStaticPod } from "../static/mirror_pods.ts";
import type { Pod } from "../types.ts";
import { milliValue } from "../../util/quantity.ts";
import {
  isExtendedResourceName,
  isScalarResourceName,
} from "../../util/resource_names.ts";

/** The verdict of admission. */
export type AdmitVerdict =
  | { admit: true }
  | { admit: false; reason: string; message: string };

/** `v1.NodeSelectorRequirement`. */
interface SelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";
  values?: string[];
}

/** The parts of the pod spec admission reads beyond the shared model. */
interface AdmissionSpec {
  os?: { name?: string };
  affinity?: {
    nodeAffinity?: {
      requiredDuringSchedulingIgnoredDuringExecution?: {
        nodeSelectorTerms?: {
          matchExpressions?: SelectorRequirement[];
          matchFields?: SelectorRequirement[];
        }[];
      };
    };
  };
}

const OS_LABEL = "kubernetes.io/os";

/** Resources checked against allocatable, in upstream's order, with their rejection reason. */
const RESOURCES: { name: string; unitDivisor: number }[] = [
  { name: "cpu", unitDivisor: 1 }, // millicores
  { name: "memory", unitDivisor: 1000 }, // bytes
  { name: "ephemeral-storage", unitDivisor: 1000 },
];

function refuse(reason: string, message: string): AdmitVerdict {
  return { admit: false, reason, message };
}

function predicateFailure(name: string, why: string): AdmitVerdict {
  return refuse(name, `Predicate ${name} failed: ${why}`);
}

function insufficient(
  resource: string,
  requested: number,
  used: number,
  capacity: number,
): AdmitVerdict {
  return refuse(
    `OutOf${resource}`,
    `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  );
}

function requestOf(pod: Pod, name: string, divisor: number): number {
  return Math.ceil((podRequests(pod).get(name) ?? 0) / divisor);
}

function allocatableOf(node: Node, name: string, divisor: number): number {
  const v = node.status?.allocatable?.[name];
  return v === undefined ? 0 : Math.floor(milliValue(v) / divisor);
}

function requirementMatches(
  r: SelectorRequirement,
  value: string | undefined,
): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      if (value === undefined || values.length !== 1) return false;
      const have = Number.parseInt(value, 10);
      const want = Number.parseInt(values[0]!, 10);
      if (Number.isNaN(have) || Number.isNaN(want)) return false;
      return r.operator === "Gt" ? have > want : have < want;
    }
    default:
      return false;
  }
}

/** `nodeSelector` and the required node affinity terms (any term, all its requirements). */
export function matchesNodeAffinity(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) {
    if (labels[k] !== v) return false;
  }
  const spec = pod.spec as AdmissionSpec;
  const required = spec.affinity?.nodeAffinity
    ?.requiredDuringSchedulingIgnoredDuringExecution;
  const terms = required?.nodeSelectorTerms;
  if (!required || !terms) return true;
  return terms.some((t) => {
    const exprs = t.matchExpressions ?? [];
    const fields = t.matchFields ?? [];
    // an empty term matches nothing
    if (!exprs.length && !fields.length) return false;
    return exprs.every((r) => requirementMatches(r, labels[r.key])) &&
      fields.every((r) =>
        r.key === "metadata.name" &&
        requirementMatches(r, node.metadata.name)
      );
  });
}

function hostPorts(pod: Pod): string[] {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  return all.flatMap((c) =>
    (c.ports ?? []).filter((p) => (p.hostPort ?? 0) > 0).map((p) =>
      `${p.protocol ?? "TCP"}/${p.hostIP || "0.0.0.0"}/${p.hostPort}`
    )
  );
}

/** Two host ports conflict on the same protocol and port when either IP is 0.0.0.0 or both equal. */
function portsConflict(pod: Pod, others: readonly Pod[]): boolean {
  const used = others.flatMap(hostPorts).map((p) => p.split("/"));
  return hostPorts(pod).some((want) => {
    const [proto, ip, port] = want.split("/");
    return used.some(([p, i, n]) =>
      p === proto && n === port &&
      (i === ip || i === "0.0.0.0" || ip === "0.0.0.0")
    );
  });
}

/** Whether one of the pod's tolerations matches `taint` (upstream `TolerationsTolerateTaint`). */
export function toleratesTaint(pod: Pod, taint: Taint): boolean {
  return (pod.spec.tolerations ?? []).some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === "Exists") return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? "") === (taint.value ?? "");
  });
}

/** Decides admission of `pod` next to `others` (the admitted, still active pods). */
export function admitPod(
  pod: Pod,
  others: readonly Pod[],
  node: Node | undefined,
  os = "linux",
): AdmitVerdict {
  if (!node) return refuse("InvalidNodeInfo", "Kubelet cannot get node info.");
  const wantOs = pod.metadata.labels?.[OS_LABEL];
  if (wantOs !== undefined && wantOs !== os) {
    return refuse(
      "PodOSSelectorNodeLabelDoesNotMatch",
      "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    );
  }
  const specOs = (pod.spec as AdmissionSpec).os?.name;
  if (specOs !== undefined && specOs !== os) {
    return refuse(
      "PodOSNotSupported",
      "Failed to admit pod as the OS field doesn't match node OS",
    );
  }
  const maxPods = allocatableOf(node, "pods", 1000);
  if (others.length + 1 > maxPods) {
    return insufficient("pods", 1, others.length, maxPods);
  }
  const allocatable = node.status?.allocatable ?? {};
  const scalar = [...podRequests(pod).keys()].filter((name) =>
    isScalarResourceName(name) &&
    (!isExtendedResourceName(name) || name in allocatable)
  ).map((name) => ({ name, unitDivisor: 1000 }));
  for (const { name, unitDivisor } of [...RESOURCES, ...scalar]) {
    const requested = requestOf(pod, name, unitDivisor);
    if (requested === 0) continue;
    const used = others.reduce(
      (sum, p) => sum + requestOf(p, name, unitDivisor),
      0,
    );
    const capacity = allocatableOf(node, name, unitDivisor);
    if (requested > capacity - used) {
      return insufficient(name, requested, used, capacity);
    }
  }
  if (!matchesNodeAffinity(pod, node)) {
    return predicateFailure(
      "NodeAffinity",
      "node(s) didn't match Pod's node affinity/selector",
    );
  }
  if (pod.spec.nodeName && pod.spec.nodeName !== node.metadata.name) {
    return predicateFailure(
      "NodeName",
      "node(s) didn't match the requested node name",
    );
  }
  if (portsConflict(pod, others)) {
    return predicateFailure(
      "NodePorts",
      "node(s) didn't have free ports for the requested pod ports",
    );
  }
  if (!isStaticPod(pod)) {
    const untolerated = (node.spec?.taints ?? []).some((t) =>
      t.effect === "NoExecute" && !toleratesTaint(pod, t)
    );
    if (untolerated) {
      return predicateFailure(
        "TaintToleration",
        "node(s) had taints that the pod didn't tolerate",
      );
    }
  }
  return { admit: true };
}

/** Dependencies of {@linkcode predicateAdmitter}. */
export interface PredicateAdmitterDeps {
  /** The Node as last read or written (upstream `getNodeAnyWay`). */
  node: () => Node | undefined;
  /** Every pod the kubelet knows (the one being admitted may be among them). */
  pods: () => readonly Pod[];
  /** False for pods that are terminal, terminating or were never admitted. */
  isActive: (pod: Pod) => boolean;
  /** The node's OS (default linux). */
  os?: string;
  /**
   * Upstream `UpdatePluginResources`: for a pod that already holds device plugin devices,
   * the devices allocated on the node per resource; allocatable is raised to them so that
   * the pod is admitted again after a kubelet restart, before its plugin registered again.
   */
  pluginResources?: (pod: Pod) => ReadonlyMap<string, number>;
}

/** `node` with each resource's allocatable raised to at least `held`. */
export function withPluginResources(
  node: Node | undefined,
  held: ReadonlyMap<string, number>,
): Node | undefined {
  if (!node || held.size === 0) return node;
  const allocatable = { ...node.status?.allocatable };
  for (const [name, count] of held) {
    const now = allocatable[name];
    if (now === undefined || milliValue(now) < count * 1000) {
      allocatable[name] = String(count);
    }
  }
  return { ...node, status: { ...node.status, allocatable } };
}

/** {@linkcode admitPod} against the kubelet's current node and active pods. */
export function predicateAdmitter(
  deps: PredicateAdmitterDeps,
): { admit(pod: Pod): AdmitVerdict } {
  return {
    admit: (pod) =>
      admitPod(
        pod,
        deps.pods().filter((p) =>
          p.metadata.uid !== pod.metadata.uid && deps.isActive(p)
        ),
        withPluginResources(
          deps.node(),
          deps.pluginResources?.(pod) ?? new Map(),
        ),
        deps.os,
      ),
  };
}
