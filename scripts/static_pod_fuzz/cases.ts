/**
 * Generated static pod manifests for the differential fuzz against upstream's decoder
 * (`peers/staticpod`): valid pods covering the field families, and near misses (wrong types,
 * bad names, bad quantities, unknown fields, YAML 1.1 scalars, JSON form, URL source, missing
 * required fields). Deterministic for a seed.
 *
 * @module
 */

import { seededRandom } from "../../src/util/seeded_random.ts";

/** One manifest as the oracle reads it. */
export interface FuzzCase {
  data: string;
  /** `file` or `url` (the oracle's spelling of the HTTP source). */
  source: "file" | "url";
  path: string;
  node: string;
  /** What the generator did, for the report. */
  label: string;
}

type Json = Record<string, unknown>;

/** A scalar written verbatim into the YAML text (`yes`, `0777`, `1e3`, `~`). */
class Raw {
  constructor(readonly text: string) {}
}

const BASES: (() => Json)[] = [
  () => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "etcd",
      namespace: "kube-system",
      creationTimestamp: null,
      labels: { component: "etcd", tier: "control-plane" },
      annotations: {
        "kubeadm.kubernetes.io/etcd.advertise-client-urls":
          "https://10.0.0.5:2379",
      },
    },
    spec: {
      containers: [{
        name: "etcd",
        image: "registry.k8s.io/etcd:3.5.15-0",
        imagePullPolicy: "IfNotPresent",
        command: ["etcd", "--data-dir=/var/lib/etcd"],
        livenessProbe: {
          failureThreshold: 8,
          httpGet: {
            host: "127.0.0.1",
            path: "/livez",
            port: 2381,
            scheme: "HTTP",
          },
          initialDelaySeconds: 10,
          periodSeconds: 10,
          timeoutSeconds: 15,
        },
        resources: { requests: { cpu: "100m", memory: "100Mi" } },
        volumeMounts: [{ mountPath: "/var/lib/etcd", name: "etcd-data" }],
      }],
      hostNetwork: true,
      priority: 2000001000,
      priorityClassName: "system-node-critical",
      securityContext: { seccompProfile: { type: "RuntimeDefault" } },
      volumes: [{
        name: "etcd-data",
        hostPath: { path: "/var/lib/etcd", type: "DirectoryOrCreate" },
      }],
    },
    status: {},
  }),
  () => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      initContainers: [{
        name: "init",
        image: "busybox:1.36",
        command: ["sh", "-c", "true"],
      }],
      containers: [{
        name: "httpd",
        image: "busybox",
        args: ["httpd", "-f", "-p", "8080"],
        workingDir: "/srv",
        ports: [{ name: "http", containerPort: 8080 }, {
          containerPort: 9090,
          protocol: "UDP",
        }],
        env: [{ name: "A", value: "1" }, {
          name: "POD_NAME",
          valueFrom: { fieldRef: { fieldPath: "metadata.name" } },
        }],
        resources: {
          limits: { cpu: "500m", memory: "128Mi" },
          requests: { cpu: "0.1" },
        },
        readinessProbe: { tcpSocket: { port: "http" } },
        startupProbe: { exec: { command: ["true"] }, failureThreshold: 30 },
        lifecycle: { preStop: { httpGet: { port: 8080 } } },
        securityContext: {
          runAsUser: 1000,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        },
        volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, {
          name: "info",
          mountPath: "/info",
          readOnly: true,
        }],
      }],
      volumes: [
        { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "64Mi" } },
        {
          name: "info",
          downwardAPI: {
            items: [{
              path: "labels",
              fieldRef: { fieldPath: "metadata.labels" },
            }],
          },
        },
      ],
      restartPolicy: "OnFailure",
      terminationGracePeriodSeconds: 5,
      dnsPolicy: "Default",
      tolerations: [{
        key: "k",
        operator: "Equal",
        value: "v",
        effect: "NoSchedule",
      }],
      nodeSelector: { "kubernetes.io/os": "linux" },
      hostname: "web-1",
      activeDeadlineSeconds: 600,
    },
  }),
  () => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "minimal" },
    spec: { containers: [{ name: "c", image: "nginx:1.27" }] },
  }),
];

const QUANTITIES = [
  "1",
  "0",
  "0.5",
  "100m",
  "1.5Gi",
  "1Ki",
  "64Mi",
  "2e3",
  "1E3",
  "0.5m",
  "1n",
  "1.234567891",
  "12345678901234567890",
  ".5",
  "5.",
  "+1",
  "-1",
  "1e-3",
  "1.5.5",
  "abc",
  "1m1",
  "10Mi ",
  "3Ei",
  "1024",
  "0.1Ki",
  "1000m",
  "7Gi",
  "999999999999999999",
];

const NAMES = [
  "ok-name",
  "Bad_Name",
  "UPPER",
  "a".repeat(64),
  "a.b.c",
  "-lead",
  "trail-",
  "x",
  "",
  "dot.",
  "a".repeat(250),
];

const YAML11 = [
  "yes",
  "no",
  "on",
  "off",
  "Y",
  "n",
  "0777",
  "1e3",
  "~",
  "null",
  "0x1F",
  "true",
  "1_000",
  "+12",
  ".5",
  "-0",
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

/** Every (container object, path) pair of a pod. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([...prefix, String(i)]);
      out.push(...paths(v, [...prefix, String(i)]));
    });
  } else if (
    value !== null && typeof value === "object" && !(value instanceof Raw)
  ) {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      out.push(...paths(v, [...prefix, k]));
    }
  }
  return out;
}

function setAt(root: Json, path: string[], value: unknown): void {
  let cur: Record<string, unknown> = root;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = value;
}

function getAt(root: Json, path: string[]): unknown {
  let cur: unknown = root;
  for (const k of path) cur = (cur as Record<string, unknown>)[k];
  return cur;
}

const WRONG = [true, false, 7, -3, 1.5, "text", [], ["a"], {}, { x: 1 }, null];

/** Applies one mutation; returns its label. */
function mutate(pod: Json, rand: () => number): string {
  const all = paths(pod);
  const roll = rand();
  if (roll < 0.15) {
    const p = pick(rand, all);
    const v = structuredClone(pick(rand, WRONG));
    setAt(pod, p, v);
    return `wrong type at ${p.join(".")}`;
  }
  if (roll < 0.27) {
    const spec = pod.spec as Json;
    const cs = spec.containers as Json[];
    const c = pick(rand, cs);
    const res = (c.resources ??= {}) as Json;
    const kind = rand() < 0.5 ? "limits" : "requests";
    const map = (res[kind] ??= {}) as Json;
    const name = pick(rand, [
      "cpu",
      "memory",
      "ephemeral-storage",
      "example.com/gpu",
      "hugepages-2Mi",
      "Bad Name",
    ]);
    const q = pick(rand, QUANTITIES);
    map[name] = rand() < 0.2 && /^[0-9.]+$/.test(q) ? Number(q) : q;
    return `quantity ${kind}.${name}=${q}`;
  }
  if (roll < 0.4) {
    const target = pick(rand, [
      ["metadata", "name"],
      ["metadata", "namespace"],
      ["spec", "containers", "0", "name"],
      ["spec", "hostname"],
      ["spec", "volumes", "0", "name"],
      ["metadata", "labels", "app"],
      ["spec", "priorityClassName"],
      ["spec", "serviceAccountName"],
    ]);
    const name = pick(rand, NAMES);
    try {
      setAt(pod, target, name);
    } catch {
      setAt(pod, ["metadata", "name"], name);
    }
    return `name ${target.join(".")}=${name.slice(0, 20)}`;
  }
  if (roll < 0.5) {
    const objects = all.filter((p) => {
      const v = getAt(pod, p);
      return v !== null && typeof v === "object" && !Array.isArray(v);
    });
    const p = objects.length ? pick(rand, objects) : [];
    const key = pick(rand, [
      "unknownField",
      "Name",
      "IMAGE",
      "extra",
      "containerport",
      "x-y",
    ]);
    const target = p.length ? getAt(pod, p) as Json : pod;
    target[key] = structuredClone(pick(rand, WRONG));
    return `unknown field ${[...p, key].join(".")}`;
  }
  if (roll < 0.62) {
    const scalarPaths = all.filter((p) => {
      const v = getAt(pod, p);
      return v === null || typeof v !== "object";
    });
    const p = pick(rand, scalarPaths);
    const raw = pick(rand, YAML11);
    setAt(pod, p, new Raw(raw));
    return `yaml1.1 ${p.join(".")}=${raw}`;
  }
  if (roll < 0.72) {
    const p = pick(rand, all);
    setAt(pod, p, undefined);
    return `removed ${p.join(".")}`;
  }
  if (roll < 0.86) {
    const spec = pod.spec as Json;
    const c = pick(rand, spec.containers as Json[]) ?? {};
    const choice = Math.floor(rand() * 12);
    switch (choice) {
      case 0:
        c.ports = [{
          containerPort: pick(rand, [0, 80, 70000, -1]),
          hostPort: pick(rand, [0, 80, 70000]),
          protocol: pick(rand, ["TCP", "tcp", "SCTP", ""]),
        }];
        break;
      case 1:
        c.env = [{
          name: pick(rand, ["OK", "a=b", "", "1X", "with space"]),
          value: "v",
        }];
        break;
      case 2:
        c.volumeMounts = [{
          name: pick(rand, ["missing", "tmp", "etcd-data", ""]),
          mountPath: pick(rand, ["/m", "", "rel"]),
        }];
        break;
      case 3:
        c.imagePullPolicy = pick(rand, ["Always", "Never", "Sometimes", ""]);
        break;
      case 4:
        c.livenessProbe = {
          httpGet: { port: pick(rand, [80, "http", 0]) },
          successThreshold: pick(rand, [0, 1, 2]),
          periodSeconds: pick(rand, [-1, 0, 5]),
        };
        break;
      case 5:
        spec.restartPolicy = pick(rand, ["Always", "Sometimes", ""]);
        break;
      case 6:
        spec.dnsPolicy = pick(rand, ["ClusterFirst", "None", "Bad"]);
        break;
      case 7:
        (spec.volumes as Json[] | undefined)?.push({
          name: pick(rand, ["v2", "tmp"]),
          hostPath: {
            path: pick(rand, ["/x", ""]),
            type: pick(rand, ["", "File", "Bogus"]),
          },
        });
        break;
      case 8:
        c.image = pick(rand, [
          "",
          "busybox",
          "Busybox:1",
          "reg:5000/a/b:latest",
          "a@sha256:" + "ab".repeat(32),
        ]);
        break;
      case 9:
        spec.containers = [...(spec.containers as Json[]), { ...c }];
        break;
      case 10:
        spec.serviceAccountName = "default";
        break;
      case 11:
        spec.terminationGracePeriodSeconds = pick(rand, [-5, 0, 30, 1e3]);
        break;
    }
    return `field family ${choice}`;
  }
  if (roll < 0.93) {
    const choice = Math.floor(rand() * 5);
    if (choice === 0) pod.kind = pick(rand, ["PodList", "Service", "Pods", ""]);
    if (choice === 1) pod.apiVersion = pick(rand, ["v2", "apps/v1", ""]);
    if (choice === 2) (pod.metadata as Json).uid = "fixed-uid";
    if (choice === 3) delete pod.kind;
    if (choice === 4) (pod.metadata as Json).name = "";
    return `type meta ${choice}`;
  }
  return "unchanged";
}

function yamlScalar(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v);
  return String(v);
}

/** Block YAML with JSON-quoted strings and verbatim {@linkcode Raw} scalars. */
function toYaml(value: unknown, indent = ""): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return " []\n";
    return "\n" + value.map((item) => {
      if (
        item !== null && typeof item === "object" && !(item instanceof Raw) &&
        (Array.isArray(item) ? item.length : Object.keys(item).length)
      ) {
        const inner = toYaml(item, indent + "  ");
        return `${indent}-${inner.startsWith("\n") ? inner : inner}`.replace(
          /^(\s*-)\n\s*/,
          "$1 ",
        );
      }
      return `${indent}- ${toYaml(item, indent + "  ").trim()}\n`;
    }).join("");
  }
  if (value !== null && typeof value === "object" && !(value instanceof Raw)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return " {}\n";
    return "\n" +
      entries.map(([k, v]) =>
        `${indent}${JSON.stringify(k)}:${
          toYaml(v, indent + "  ").replace(/^(?!\n)/, " ")
        }`
      ).join("");
  }
  return `${yamlScalar(value)}\n`;
}

function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v instanceof Raw) {
      try {
        return JSON.parse(v.text);
      } catch {
        return v.text;
      }
    }
    return v;
  });
}

/** `count` cases from `seed`. */
export function generateCases(count: number, seed: number): FuzzCase[] {
  const rand = seededRandom(seed);
  const out: FuzzCase[] = [];
  for (let i = 0; i < count; i++) {
    const pod = pick(rand, BASES)();
    const labels: string[] = [];
    const n = rand() < 0.3 ? 0 : 1 + Math.floor(rand() * 3);
    for (let j = 0; j < n; j++) {
      // A mutation can meet a shape an earlier one broke; it is then skipped.
      try {
        labels.push(mutate(pod, rand));
      } catch {
        labels.push("skipped");
      }
    }
    const json = rand() < 0.15;
    const url = rand() < 0.15;
    const data = json ? toJson(pod) : toYaml(pod).replace(/^\n/, "");
    out.push({
      data,
      source: url ? "url" : "file",
      path: url
        ? `http://manifests.local/node/${i}`
        : `/etc/kubernetes/manifests/m${i % 7}.yaml`,
      node: pick(rand, ["node-1", "worker.example.com", "n"]),
      label: [json ? "json" : "yaml", url ? "url" : "file", ...labels].join(
        "; ",
      ),
    });
  }
  return out;
}
