/**
 * `ValidateKubeletFlags` (cmd/kubelet/app/options/options.go): checks
 * `--node-labels`.
 * @module
 */
import { labelValueErrors, qualifiedNameErrors } from "../util/k8s_names.ts";
import type { KubeletFlags } from "./kubelet_flags.ts";

const ALLOWED_PREFIXES = ["kubelet.kubernetes.io", "node.kubernetes.io"];
const ALLOWED_LABELS = [
  "beta.kubernetes.io/arch",
  "beta.kubernetes.io/instance-type",
  "beta.kubernetes.io/os",
  "failure-domain.beta.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "kubernetes.io/arch",
  "kubernetes.io/hostname",
  "kubernetes.io/os",
  "node.kubernetes.io/instance-type",
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
];

function namespaceOf(key: string): string {
  const slash = key.indexOf("/");
  return slash < 0 ? "" : key.slice(0, slash);
}

function inDomain(namespace: string, domain: string): boolean {
  return namespace === domain || namespace.endsWith("." + domain);
}

/** True for labels in the `kubernetes.io` / `k8s.io` namespaces. */
export function isKubernetesLabel(key: string): boolean {
  const ns = namespaceOf(key);
  return inDomain(ns, "kubernetes.io") || inDomain(ns, "k8s.io");
}

/** True for labels the kubelet may set on its own Node. */
export function isKubeletLabel(key: string): boolean {
  if (ALLOWED_LABELS.includes(key)) return true;
  const ns = namespaceOf(key);
  return ALLOWED_PREFIXES.some((prefix) => inDomain(ns, prefix));
}

/** A rejected `--node-labels` value. */
export class NodeLabelsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NodeLabelsError";
  }
}

/**
 * Returns the problem with the flags, or undefined. The message has the
 * upstream text (callers prefix `failed to validate kubelet flags: `).
 */
export function validateKubeletFlags(
  flags: KubeletFlags,
): NodeLabelsError | undefined {
  const unknown: string[] = [];
  const invalid = new Map<string, string[]>();
  const addInvalid = (key: string, errs: string[]) => {
    if (errs.length > 0) {
      invalid.set(key, [...(invalid.get(key) ?? []), ...errs]);
    }
  };
  for (const [key, value] of Object.entries(flags.nodeLabels)) {
    if (isKubernetesLabel(key) && !isKubeletLabel(key)) unknown.push(key);
    addInvalid(key, qualifiedNameErrors(key));
    addInvalid(value, labelValueErrors(value));
  }
  if (unknown.length > 0) {
    unknown.sort();
    return new NodeLabelsError(
      `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [${
        unknown.join(" ")
      }]\n--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${
        ALLOWED_PREFIXES.join(", ")
      }) or be in the specifically allowed set (${ALLOWED_LABELS.join(", ")})`,
    );
  }
  if (invalid.size > 0) {
    const items = [...invalid].map(([k, errs]) =>
      `'${k}' - ${errs.join(", ")}`
    );
    return new NodeLabelsError(`invalid node labels: ${items.join("; ")}`);
  }
  return undefined;
}
