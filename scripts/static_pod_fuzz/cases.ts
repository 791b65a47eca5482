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

/** One family of pod fields, set to a valid value or a near miss. */
interface PodFamily {
  name: string;
  apply(spec: Json, container: Json, rand: () => number): void;
}

const LABEL_KEYS = ["app", "example.com/tier", "Bad Key", "a/b/c", "", "-x"];
const LABEL_VALUES = ["web", "", "bad value", "x".repeat(64), "a_b.c-d"];

function selector(rand: () => number): Json {
  const out: Json = {};
  if (rand() < 0.6) {
    out.matchLabels = { [pick(rand, LABEL_KEYS)]: pick(rand, LABEL_VALUES) };
  }
  if (rand() < 0.6) {
    out.matchExpressions = [{
      key: pick(rand, LABEL_KEYS),
      operator: pick(rand, [
        "In",
        "NotIn",
        "Exists",
        "DoesNotExist",
        "Gt",
        "Is",
      ]),
      values: pick(rand, [[], ["web"], ["a", "b"], ["bad value"]]),
    }];
  }
  return out;
}

function nodeTerm(rand: () => number): Json {
  const term: Json = {};
  if (rand() < 0.8) {
    term.matchExpressions = [{
      key: pick(rand, ["kubernetes.io/os", "zone", "Bad Key"]),
      operator: pick(rand, [
        "In",
        "NotIn",
        "Exists",
        "DoesNotExist",
        "Gt",
        "Lt",
        "Near",
      ]),
      values: pick(rand, [[], ["linux"], ["1"], ["1", "2"], ["bad value"]]),
    }];
  }
  if (rand() < 0.3) {
    term.matchFields = [{
      key: pick(rand, ["metadata.name", "spec.nodeName"]),
      operator: pick(rand, ["In", "NotIn", "Exists"]),
      values: pick(rand, [["node-1"], ["Bad_Node"], [], ["a", "b"]]),
    }];
  }
  return term;
}

function podTerm(rand: () => number): Json {
  const term: Json = {
    topologyKey: pick(rand, ["kubernetes.io/hostname", "", "Bad Key"]),
  };
  if (rand() < 0.8) term.labelSelector = selector(rand);
  if (rand() < 0.2) term.namespaceSelector = selector(rand);
  if (rand() < 0.3) term.namespaces = [pick(rand, ["kube-system", "Bad.NS"])];
  if (rand() < 0.3) term.matchLabelKeys = [pick(rand, LABEL_KEYS)];
  if (rand() < 0.2) term.mismatchLabelKeys = [pick(rand, LABEL_KEYS)];
  return term;
}

const POD_FAMILIES: PodFamily[] = [
  {
    name: "nodeAffinity",
    apply(spec, _c, rand) {
      const na: Json = {};
      if (rand() < 0.7) {
        na.requiredDuringSchedulingIgnoredDuringExecution = {
          nodeSelectorTerms: rand() < 0.15 ? [] : [nodeTerm(rand)],
        };
      }
      if (rand() < 0.5) {
        na.preferredDuringSchedulingIgnoredDuringExecution = [{
          weight: pick(rand, [1, 50, 100, 0, 101]),
          preference: nodeTerm(rand),
        }];
      }
      spec.affinity = { nodeAffinity: na };
    },
  },
  {
    name: "podAffinity",
    apply(spec, _c, rand) {
      const kind = rand() < 0.5 ? "podAffinity" : "podAntiAffinity";
      const pa: Json = {};
      if (rand() < 0.7) {
        pa.requiredDuringSchedulingIgnoredDuringExecution = [podTerm(rand)];
      }
      if (rand() < 0.5) {
        pa.preferredDuringSchedulingIgnoredDuringExecution = [{
          weight: pick(rand, [1, 100, 0, -1, 200]),
          podAffinityTerm: podTerm(rand),
        }];
      }
      spec.affinity = { [kind]: pa };
    },
  },
  {
    name: "topologySpreadConstraints",
    apply(spec, _c, rand) {
      const one = (): Json => {
        const t: Json = {
          maxSkew: pick(rand, [1, 2, 0, -1]),
          topologyKey: pick(rand, ["zone", "kubernetes.io/hostname", ""]),
          whenUnsatisfiable: pick(rand, [
            "DoNotSchedule",
            "ScheduleAnyway",
            "Maybe",
          ]),
        };
        if (rand() < 0.6) t.labelSelector = selector(rand);
        if (rand() < 0.3) t.minDomains = pick(rand, [1, 3, 0, -2]);
        if (rand() < 0.3) {
          t.nodeAffinityPolicy = pick(rand, ["Honor", "Ignore", "Sometimes"]);
        }
        if (rand() < 0.3) {
          t.nodeTaintsPolicy = pick(rand, ["Honor", "Ignore", "honor"]);
        }
        if (rand() < 0.3) t.matchLabelKeys = [pick(rand, LABEL_KEYS)];
        return t;
      };
      spec.topologySpreadConstraints = rand() < 0.3 ? [one(), one()] : [one()];
    },
  },
  {
    name: "dnsConfig",
    apply(spec, _c, rand) {
      if (rand() < 0.5) spec.dnsPolicy = "None";
      if (rand() < 0.1) return;
      const config: Json = {};
      if (rand() < 0.8) {
        config.nameservers = pick(rand, [
          ["1.1.1.1"],
          ["2001:db8::1"],
          ["010.001.002.003"],
          ["1.2.3.4", "5.6.7.8", "9.9.9.9", "8.8.8.8"],
          ["not-an-ip"],
          ["fe80::1%eth0"],
          [],
        ]);
      }
      if (rand() < 0.6) {
        config.searches = pick(rand, [
          ["svc.cluster.local"],
          ["example.com."],
          ["Bad_Domain"],
          ["."],
          Array.from({ length: 33 }, (_, i) => `s${i}.example`),
          ["a".repeat(300) + ".example"],
        ]);
      }
      if (rand() < 0.5) {
        config.options = [pick(rand, [
          { name: "ndots", value: "2" },
          { name: "" },
          { value: "1" },
        ])];
      }
      spec.dnsConfig = config;
    },
  },
  {
    name: "hostAliases",
    apply(spec, _c, rand) {
      spec.hostAliases = [{
        ip: pick(rand, ["127.0.0.1", "::1", "", "300.1.1.1", "host"]),
        hostnames: pick(rand, [["foo.local"], ["Bad_Host"], [], ["a", "b.c"]]),
      }];
    },
  },
  {
    name: "sysctls",
    apply(spec, _c, rand) {
      const names = [
        "net.ipv4.ip_forward",
        "kernel.shm_rmid_forced",
        "kernel.msgmax",
        "fs.mqueue.queues_max",
        "net/ipv4/conf/eth0.100/forwarding",
        "vm.swappiness",
        "Bad..Name",
        "",
      ];
      spec.securityContext = {
        ...(spec.securityContext as Json | undefined),
        sysctls: rand() < 0.3
          ? [{ name: pick(rand, names), value: "1" }, {
            name: pick(rand, names),
            value: "1",
          }]
          : [{ name: pick(rand, names), value: "1" }],
      };
      if (rand() < 0.4) spec.hostNetwork = true;
      if (rand() < 0.3) spec.hostIPC = true;
    },
  },
  {
    name: "podSecurityContext",
    apply(spec, _c, rand) {
      const sc: Json = { ...(spec.securityContext as Json | undefined) };
      const ids = [0, 1000, -1, 2147483647, 2147483648];
      const setOne = (key: string, values: unknown[]) => {
        if (rand() < 0.35) sc[key] = structuredClone(pick(rand, values));
      };
      setOne("runAsUser", ids);
      setOne("runAsGroup", ids);
      setOne("fsGroup", ids);
      setOne("supplementalGroups", [[1, 2], [-5], [3000000000]]);
      setOne("fsGroupChangePolicy", ["Always", "OnRootMismatch", "Never"]);
      setOne("supplementalGroupsPolicy", ["Merge", "Strict", "Loose"]);
      setOne("seLinuxChangePolicy", ["Recursive", "MountOption", "Sometimes"]);
      setOne("seLinuxOptions", [{ level: "s0:c1,c2" }, { type: "spc_t" }]);
      setOne("seccompProfile", [
        { type: "Localhost", localhostProfile: "profiles/a.json" },
        { type: "Localhost" },
        { type: "Localhost", localhostProfile: "/abs.json" },
        { type: "Localhost", localhostProfile: "../up.json" },
        { type: "RuntimeDefault", localhostProfile: "x" },
        { type: "" },
        { type: "Custom" },
      ]);
      setOne("appArmorProfile", [
        { type: "RuntimeDefault" },
        { type: "Localhost", localhostProfile: "k8s-apparmor" },
        { type: "Localhost" },
        { type: "Localhost", localhostProfile: " padded " },
        { type: "Localhost", localhostProfile: "" },
        { type: "Unconfined", localhostProfile: "x" },
        { type: "" },
        { type: "Custom" },
      ]);
      setOne("windowsOptions", [
        { runAsUserName: "ContainerUser" },
        { runAsUserName: "" },
        { runAsUserName: "DOMAIN\\user" },
        { runAsUserName: "a\\b\\c" },
        { runAsUserName: "bad:user" },
        { runAsUserName: "..." },
        { gmsaCredentialSpecName: "Bad_Name" },
        { gmsaCredentialSpec: "" },
        { hostProcess: true },
      ]);
      spec.securityContext = sc;
      if (rand() < 0.25) spec.shareProcessNamespace = pick(rand, [true, false]);
      if (rand() < 0.25) spec.hostPID = true;
    },
  },
  {
    name: "containerSecurityContext",
    apply(_spec, c, rand) {
      const sc: Json = {};
      const setOne = (key: string, values: unknown[]) => {
        if (rand() < 0.35) sc[key] = structuredClone(pick(rand, values));
      };
      setOne("runAsUser", [0, 1000, -1, 2147483648]);
      setOne("runAsGroup", [0, -1, 2147483648]);
      setOne("runAsNonRoot", [true, false]);
      setOne("privileged", [true, false]);
      setOne("allowPrivilegeEscalation", [true, false]);
      setOne("procMount", ["Default", "Unmasked", "Masked"]);
      setOne("capabilities", [
        { add: ["NET_ADMIN"], drop: ["ALL"] },
        { add: ["CAP_SYS_ADMIN"] },
      ]);
      setOne("readOnlyRootFilesystem", [true]);
      setOne("seLinuxOptions", [{ user: "system_u", role: "object_r" }]);
      setOne("seccompProfile", [
        { type: "RuntimeDefault" },
        { type: "Localhost", localhostProfile: "a/../b" },
        { type: "Bogus" },
      ]);
      setOne("appArmorProfile", [
        { type: "Unconfined" },
        { type: "Localhost" },
        { type: "bogus" },
      ]);
      setOne("windowsOptions", [{ hostProcess: false }, { hostProcess: true }, {
        runAsUserName: "x".repeat(105),
      }]);
      c.securityContext = sc;
    },
  },
  {
    name: "hostUsers",
    apply(spec, c, rand) {
      spec.hostUsers = pick(rand, [false, false, true]);
      if (rand() < 0.4) spec.hostNetwork = true;
      if (rand() < 0.3) spec.hostPID = true;
      if (rand() < 0.3) spec.hostIPC = true;
      if (rand() < 0.3) c.securityContext = { procMount: "Unmasked" };
      if (rand() < 0.2) {
        c.volumeDevices = [{ name: "dev", devicePath: "/dev/x" }];
      }
    },
  },
  {
    name: "ephemeralContainers",
    apply(spec, _c, rand) {
      const ec: Json = {
        name: pick(rand, ["debugger", "etcd", "httpd", "Bad_Name"]),
        image: pick(rand, ["busybox", "", " busybox "]),
      };
      if (rand() < 0.4) {
        ec.targetContainerName = pick(rand, ["etcd", "httpd", "c", "nope"]);
      }
      if (rand() < 0.3) ec.ports = [{ containerPort: 80 }];
      if (rand() < 0.2) ec.resources = { limits: { cpu: "1" } };
      if (rand() < 0.2) {
        ec.lifecycle = { preStop: { exec: { command: ["x"] } } };
      }
      if (rand() < 0.2) ec.readinessProbe = { exec: { command: ["x"] } };
      spec.ephemeralContainers = [ec];
    },
  },
  {
    name: "initContainerRules",
    apply(spec, _c, rand) {
      const ic: Json = {
        name: pick(rand, ["init-a", "init-b", "etcd", "httpd"]),
        image: pick(rand, ["busybox", "busybox "]),
      };
      if (rand() < 0.5) {
        ic.restartPolicy = pick(rand, ["Always", "Never", "OnFailure"]);
      }
      if (rand() < 0.4) ic.livenessProbe = { exec: { command: ["true"] } };
      if (rand() < 0.3) {
        ic.lifecycle = { postStart: { exec: { command: ["true"] } } };
      }
      if (rand() < 0.3) ic.startupProbe = { tcpSocket: { port: 80 } };
      if (rand() < 0.3) {
        ic.resizePolicy = [{
          resourceName: "cpu",
          restartPolicy: "NotRequired",
        }];
      }
      if (rand() < 0.3) ic.ports = [{ containerPort: 80, hostPort: 8080 }];
      spec.initContainers = [...(spec.initContainers as Json[] ?? []), ic];
    },
  },
  {
    name: "resizePolicy",
    apply(spec, c, rand) {
      const one = () => ({
        resourceName: pick(rand, ["cpu", "memory", "storage", ""]),
        restartPolicy: pick(rand, [
          "NotRequired",
          "RestartContainer",
          "Later",
          "",
        ]),
      });
      c.resizePolicy = rand() < 0.3 ? [one(), one()] : [one()];
      if (rand() < 0.4) spec.restartPolicy = "Never";
    },
  },
  {
    name: "readinessGates",
    apply(spec, _c, rand) {
      spec.readinessGates = [{
        conditionType: pick(rand, [
          "example.com/ready",
          "Ready",
          "bad gate",
          "",
        ]),
      }];
    },
  },
  {
    name: "schedulingGates",
    apply(spec, _c, rand) {
      const name = () =>
        pick(rand, ["example.com/wait", "gate", "bad gate", ""]);
      spec.schedulingGates = rand() < 0.3
        ? [{ name: name() }, { name: name() }]
        : [{ name: name() }];
    },
  },
  {
    name: "os",
    apply(spec, c, rand) {
      spec.os = { name: pick(rand, ["linux", "windows", "", "plan9"]) };
      if (rand() < 0.4) {
        c.securityContext = pick(rand, [
          { windowsOptions: { runAsUserName: "u" } },
          { runAsUser: 1 },
          { privileged: false, capabilities: { drop: ["ALL"] } },
        ]);
      }
      if (rand() < 0.3) {
        spec.securityContext = pick(rand, [{ runAsUser: 5 }, {
          windowsOptions: { runAsUserName: "u" },
        }, { seccompProfile: { type: "RuntimeDefault" } }]);
      }
    },
  },
  {
    name: "overhead",
    apply(spec, _c, rand) {
      spec.overhead = {
        [pick(rand, ["cpu", "memory", "example.com/x", "Bad Name", "pods"])]:
          pick(
            rand,
            QUANTITIES,
          ),
      };
    },
  },
  {
    name: "podResources",
    apply(spec, _c, rand) {
      // only requests: pod-level limits set defaults kubelet.ts does not apply yet
      spec.resources = {
        requests: {
          [pick(rand, ["cpu", "memory", "hugepages-2Mi", "example.com/x"])]:
            pick(
              rand,
              QUANTITIES,
            ),
        },
      };
    },
  },
  {
    name: "resourceClaims",
    apply(spec, c, rand) {
      if (rand() < 0.8) {
        const claim: Json = { name: pick(rand, ["gpu", "", "Bad_Claim"]) };
        const which = rand();
        if (which < 0.4) {
          claim.resourceClaimName = pick(rand, ["my-claim", "Bad_Claim"]);
        } else if (which < 0.8) claim.resourceClaimTemplateName = "tmpl";
        else if (which < 0.9) {
          claim.resourceClaimName = "a";
          claim.resourceClaimTemplateName = "b";
        }
        spec.resourceClaims = [claim];
      }
      const res = (c.resources ??= {}) as Json;
      res.claims = pick(rand, [
        [{ name: "gpu" }],
        [{ name: "gpu", request: "one" }],
        [{ name: "gpu" }, { name: "gpu" }],
        [{ name: "gpu", request: "a" }, { name: "gpu" }],
        [{ name: "" }],
        [{ name: "other" }],
        [{ name: "gpu", request: "Bad_Req" }],
      ]);
    },
  },
  {
    name: "misc",
    apply(spec, c, rand) {
      const choice = Math.floor(rand() * 7);
      if (choice === 0) {
        spec.runtimeClassName = pick(rand, ["runc", "Bad_Class", ""]);
      }
      if (choice === 1) {
        spec.preemptionPolicy = pick(rand, [
          "Never",
          "PreemptLowerPriority",
          "",
          "Always",
        ]);
      }
      if (choice === 2) {
        spec.hostnameOverride = pick(rand, [
          "my.host",
          "Bad_Host",
          "a".repeat(70),
        ]);
        if (rand() < 0.4) spec.setHostnameAsFQDN = true;
      }
      if (choice === 3) {
        spec.imagePullSecrets = [
          pick(rand, [{ name: "regcred" }, { name: "" }]),
        ];
      }
      if (choice === 4) c.image = pick(rand, [" nginx", "nginx ", "\tnginx"]);
      if (choice === 5) {
        spec.volumes = [...(spec.volumes as Json[] ?? []), {
          name: "tok",
          projected: { sources: [{ serviceAccountToken: { path: "token" } }] },
        }];
        if (rand() < 0.5) spec.serviceAccountName = "builder";
      }
      if (choice === 6) {
        c.env = [{
          name: "F",
          valueFrom: {
            fileKeyRef: {
              volumeName: pick(rand, ["tmp", "etcd-data", "none"]),
              path: "f.env",
              key: "K",
            },
          },
        }];
      }
    },
  },
];

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
  if (roll < 0.8) {
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
    const spec = pod.spec as Json;
    const c = pick(rand, spec.containers as Json[]) ?? {};
    const family = pick(rand, POD_FAMILIES);
    family.apply(spec, c, rand);
    return `pod family ${family.name}`;
  }
  if (roll < 0.96) {
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
