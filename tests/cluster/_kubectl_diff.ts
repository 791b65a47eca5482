/**
 * Pure views for tests/cluster/kubectl_diff_test.ts: kubectl output with what is inherently
 * variable masked, and the shapes (key paths, metric names) compared where values differ by
 * nature.
 */

/** What names one side apart from the other. */
export interface Masks {
  ns: string;
  node: string;
  ip: string;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Rules for values that differ from run to run whatever the kubelet: data, not code. */
const VARIABLE: [RegExp, string][] = [
  [/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)/g, "<time>"],
  [/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>"],
  [/\btick \d+/g, "tick <n>"],
  // Which of the two texts depends on where the pull back-off stands, not on the kubelet.
  [/trying and failing to pull image/g, "image can't be pulled"],
  // Container and exec ids.
  [/\b[0-9a-f]{64}\b/g, "<id>"],
];

/** `text` with the side's namespace, node name and IP masked, then the variable values. */
export function maskOutput(text: string, m: Masks): string {
  let out = text
    .replace(new RegExp(escape(m.ns), "g"), "<ns>")
    .replace(new RegExp(escape(m.node), "g"), "<node>")
    .replace(new RegExp(escape(m.ip), "g"), "<node-ip>");
  for (const [re, to] of VARIABLE) out = out.replace(re, to);
  return out;
}

/**
 * Every key path in `value`, sorted: objects give `a.b`, arrays `a[]` with the keys of all
 * their elements merged, so two documents compare by shape and not by values or lengths.
 */
export function keyPaths(value: unknown, prefix = ""): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      for (const e of v) walk(e, `${path}[]`);
    } else if (v !== null && typeof v === "object") {
      for (const [k, e] of Object.entries(v)) {
        const p = path ? `${path}.${k}` : k;
        out.add(p);
        walk(e, p);
      }
    }
  };
  walk(value, prefix);
  return [...out].sort();
}

/** Key paths of the item named `name` in a PodList's JSON; undefined when it is not there. */
export function podShape(listJson: string, name: string): string[] | undefined {
  const list = JSON.parse(listJson) as {
    items?: { metadata?: { name?: string } }[];
  };
  const pod = list.items?.find((p) => p.metadata?.name === name);
  return pod ? keyPaths(pod) : undefined;
}

/**
 * The order of a listed pod's condition types and container status names, which kubectl
 * shows as they come.
 */
export function podOrder(listJson: string, name: string): unknown {
  const list = JSON.parse(listJson) as {
    items?: {
      metadata?: { name?: string };
      status?: {
        conditions?: { type: string }[];
        containerStatuses?: { name: string }[];
      };
    }[];
  };
  const pod = list.items?.find((p) => p.metadata?.name === name);
  return pod && {
    conditions: pod.status?.conditions?.map((c) => c.type),
    containerStatuses: pod.status?.containerStatuses?.map((c) => c.name),
  };
}

/** The metric family names of a Prometheus text exposition (its `# TYPE` lines), sorted. */
export function metricNames(text: string): string[] {
  const names = new Set<string>();
  for (const line of text.split("\n")) {
    const m = /^# TYPE (\S+) /.exec(line);
    if (m) names.add(m[1]!);
  }
  return [...names].sort();
}
