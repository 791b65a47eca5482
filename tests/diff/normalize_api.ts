/**
 * What two kubelets joined to a control plane can be compared on in the API objects they
 * write: a pod's status, a mirror pod, events and the Node, each cut to the fields a kubelet
 * decides and masked (via `mask`, plus IP addresses, durations and ports) so that two runs
 * on two Nodes look alike.
 */
import { mask, type MaskOptions } from "./normalize.ts";

type Obj = Record<string, unknown>;

const IPV4_RE = /\b\d{1,3}(\.\d{1,3}){3}\b/g;
// "in 1.2s", "(350ms including waiting)": times an image pull or a probe took
const DURATION_RE = /\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b/g;

function deepStrings(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) return value.map((v) => deepStrings(v, f));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, deepStrings(v, f)]),
    );
  }
  return value;
}

/** `mask`, then IPv4 addresses as `<ip>` and durations as `<duration>`. */
export function maskApi(value: unknown, options: MaskOptions): unknown {
  return deepStrings(
    mask(value, options),
    (s) => s.replace(IPV4_RE, "<ip>").replace(DURATION_RE, "<duration>"),
  );
}

const byKey = (key: string) => (a: Obj, b: Obj) =>
  String(a[key]).localeCompare(String(b[key]));

/** Conditions sorted by type, each as type, status and reason. */
function conditions(list: unknown): Obj[] {
  return ((list ?? []) as Obj[]).map((c) => ({
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
  })).sort(byKey("type"));
}

/**
 * A pod's status as the API server holds it: every field the kubelet wrote, conditions
 * sorted by type and reduced to type/status/reason, times and IDs left to the masking.
 */
export function podStatusView(pod: Obj | undefined): unknown {
  const status = { ...(pod?.status ?? {}) as Obj };
  status.conditions = conditions(status.conditions);
  for (const k of ["containerStatuses", "initContainerStatuses"]) {
    if (Array.isArray(status[k])) {
      status[k] = [...status[k] as Obj[]].sort(byKey("name"));
    }
  }
  return status;
}

/** What the kubelet decides about a mirror pod: labels, annotations, owners, spec. */
export function mirrorPodView(pod: Obj | undefined): unknown {
  const meta = (pod?.metadata ?? {}) as Obj;
  return {
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    ownerReferences: meta.ownerReferences ?? [],
    spec: pod?.spec,
  };
}

interface Event {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; fieldPath?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

const component = (e: Event) =>
  e.source?.component ?? e.reportingComponent ?? "";

/**
 * The kubelet's events about the objects named `names` (a pod, a Node), each once, sorted:
 * object kind, field path, type, reason, message and component. Counts and times differ by
 * timing alone; the controllers' events (RegisteredNode) by when they looked.
 */
export function eventsView(
  list: { items?: Event[] } | undefined,
  names: string[],
): string[] {
  const lines = (list?.items ?? []).filter((e) =>
    names.includes(e.involvedObject?.name ?? "") && component(e) === "kubelet"
  ).map((e) =>
    [
      e.involvedObject?.kind,
      e.involvedObject?.fieldPath ?? "",
      e.type,
      e.reason,
      component(e),
      e.message ?? "",
    ].join(" | ")
  );
  return [...new Set(lines)].sort();
}

/** Keys of an object, sorted. */
const keys = (o: unknown) => Object.keys((o ?? {}) as Obj).sort();

/** nodeInfo values that are the host's (same for both kubelets on one machine). */
const HOST_INFO = [
  "architecture",
  "bootID",
  "containerRuntimeVersion",
  "kernelVersion",
  "machineID",
  "operatingSystem",
  "osImage",
  "systemUUID",
];

/**
 * The Node as its kubelet registers and reports it: labels, annotation keys, taints,
 * conditions, capacity and allocatable keys (and the host's cpu and pods counts), nodeInfo
 * (host values; the kubelet's own versions only as keys), address types, daemon endpoints
 * (ports masked) and the image names.
 */
export function nodeView(node: Obj | undefined): unknown {
  const spec = (node?.spec ?? {}) as Obj;
  const status = (node?.status ?? {}) as Obj;
  const capacity = (status.capacity ?? {}) as Obj;
  const info = (status.nodeInfo ?? {}) as Obj;
  const meta = (node?.metadata ?? {}) as Obj;
  const endpoints = (status.daemonEndpoints ?? {}) as Record<
    string,
    { Port?: number }
  >;
  return {
    labels: meta.labels ?? {},
    annotations: keys(meta.annotations),
    taints: ((spec.taints ?? []) as Obj[]).map((t) => `${t.key}:${t.effect}`)
      .sort(),
    unschedulable: spec.unschedulable ?? false,
    conditions: conditions(status.conditions),
    capacity: keys(capacity),
    cpu: capacity.cpu,
    pods: capacity.pods,
    allocatable: keys(status.allocatable),
    nodeInfo: Object.fromEntries(
      keys(info).map((
        k,
      ) => [k, HOST_INFO.includes(k) ? info[k] : "<kubelet's>"]),
    ),
    addresses: ((status.addresses ?? []) as Obj[]).map((a) => a.type),
    daemonEndpoints: Object.fromEntries(
      Object.entries(endpoints).map(([k, v]) => [k, {
        Port: v.Port ? "<port>" : v.Port,
      }]),
    ),
    images: ((status.images ?? []) as { names?: string[] }[]).flatMap((i) =>
      (i.names ?? []).filter((n) => !n.includes("@"))
    ).sort(),
    runtimeHandlers: status.runtimeHandlers,
    features: status.features,
  };
}
