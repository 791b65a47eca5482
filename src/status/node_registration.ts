/**
 * The Node object the kubelet registers and how it reconciles an existing one (upstream
 * `kubelet_node_status.go`: `initialNode`, `reconcileCMADAnnotationWithExistingNode`,
 * `updateDefaultLabels`, and the labels `updateNode` restores in every status round).
 * @module
 */
import type { Node, Taint } from "../api/mod.ts";

/** Annotation set while controllers attach and detach volumes. */
export const CMAD_ANNOTATION =
  "volumes.kubernetes.io/controller-managed-attach-detach";

/** Options of {@linkcode initialNode}. */
export interface NodeRegistrationOptions {
  nodeName: string;
  hostname: string;
  /** `kubernetes.io/os` (Go's GOOS names). */
  os: string;
  /** `kubernetes.io/arch` (Go's GOARCH names). */
  arch: string;
  /** `--node-labels`. */
  nodeLabels?: Record<string, string>;
  /** `--register-with-taints`. */
  taints?: Taint[];
  /** `--register-schedulable` (default true). */
  registerSchedulable?: boolean;
  /** `--provider-id`. */
  providerID?: string;
  /** `enableControllerAttachDetach` (default true). */
  controllerAttachDetach?: boolean;
}

/** Labels the kubelet owns and keeps in step on an existing Node. */
export const DEFAULT_LABELS = [
  "kubernetes.io/hostname",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "node.kubernetes.io/instance-type",
  "beta.kubernetes.io/instance-type",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
];

/** Go's GOARCH for Deno's `Deno.build.arch`. */
export function goArch(arch: string): string {
  return ({ x86_64: "amd64", aarch64: "arm64" } as Record<string, string>)[
    arch
  ] ??
    arch;
}

/** The Node to create (status is added by the caller). */
export function initialNode(options: NodeRegistrationOptions): Node {
  const labels: Record<string, string> = {
    "beta.kubernetes.io/arch": options.arch,
    "beta.kubernetes.io/os": options.os,
    "kubernetes.io/arch": options.arch,
    "kubernetes.io/hostname": options.hostname,
    "kubernetes.io/os": options.os,
    ...options.nodeLabels,
  };
  const taints: Taint[] = [...(options.taints ?? [])];
  const schedulable = options.registerSchedulable ?? true;
  if (!schedulable) {
    taints.push({
      key: "node.kubernetes.io/unschedulable",
      effect: "NoSchedule",
    });
  }
  const node: Node = { metadata: { name: options.nodeName, labels }, spec: {} };
  if (options.controllerAttachDetach ?? true) {
    node.metadata.annotations = { [CMAD_ANNOTATION]: "true" };
  }
  if (taints.length) node.spec!.taints = taints;
  if (!schedulable) node.spec!.unschedulable = true;
  if (options.providerID) node.spec!.providerID = options.providerID;
  return node;
}

/**
 * The existing Node with the kubelet-owned metadata of `initial` applied, and whether
 * anything changed: the attach/detach annotation, and the default labels `initial` has.
 */
export function reconcileExistingNode(
  existing: Node,
  initial: Node,
): { node: Node; changed: boolean } {
  const node: Node = structuredClone(existing);
  let changed = false;
  const annotations = { ...node.metadata.annotations };
  const wantCmad = initial.metadata.annotations?.[CMAD_ANNOTATION] === "true";
  if (wantCmad && annotations[CMAD_ANNOTATION] !== "true") {
    annotations[CMAD_ANNOTATION] = "true";
    changed = true;
  } else if (!wantCmad && CMAD_ANNOTATION in annotations) {
    delete annotations[CMAD_ANNOTATION];
    changed = true;
  }
  node.metadata.annotations = annotations;
  const labels = { ...node.metadata.labels };
  for (const key of DEFAULT_LABELS) {
    const want = initial.metadata.labels?.[key];
    if (want === undefined) continue;
    if (labels[key] !== want) {
      labels[key] = want;
      changed = true;
    }
    if (labels[key] === "") delete labels[key];
  }
  node.metadata.labels = labels;
  return { node, changed };
}

/**
 * The Node's labels with `kubernetes.io/os` and `kubernetes.io/arch` set to this host's, or
 * undefined when both are already right. Upstream's `updateNode` puts these two back in every
 * status round, so a Node whose labels someone changed is corrected while the kubelet runs,
 * not only at its next start.
 */
export function restoreOsArchLabels(
  labels: Record<string, string> | undefined,
  os: string,
  arch: string,
): Record<string, string> | undefined {
  if (
    labels?.["kubernetes.io/os"] === os && labels["kubernetes.io/arch"] === arch
  ) {
    return undefined;
  }
  return { ...labels, "kubernetes.io/os": os, "kubernetes.io/arch": arch };
}
