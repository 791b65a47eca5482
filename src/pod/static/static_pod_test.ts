import assert from "node:assert/strict";
import {
  applyStaticPodDefaults,
  CONFIG_HASH_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  filterDuplicatePodNames,
  ManifestError,
  readStaticPods,
  type StaticPodDefaultsOptions,
} from "./static_pod.ts";
import type { Pod } from "../types.ts";

const WEB = `
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: httpd
    image: busybox:1.36
    command: ["httpd", "-f"]
`;

const FILE: StaticPodDefaultsOptions = {
  nodeName: "n",
  source: "file",
  origin: "/m/x.yaml",
};

/** {@linkcode WEB} as the object a source hands over before the defaults. */
const WEB_POD = {
  metadata: { name: "web" },
  spec: {
    containers: [{
      name: "httpd",
      image: "busybox:1.36",
      command: ["httpd", "-f"],
    }],
  },
} as Pod;

/** The one pod `text` defines as a file manifest (fails the test otherwise). */
async function onePod(text: string, origin = "/m/x.yaml"): Promise<Pod> {
  const { pods, errors } = await readStaticPods(text, { ...FILE, origin });
  assert.deepEqual(errors, []);
  assert.equal(pods.length, 1);
  return pods[0]!;
}

Deno.test("readStaticPods() reads a single YAML pod", async () => {
  const pod = await onePod(WEB);
  assert.equal(pod.spec.containers[0]!.image, "busybox:1.36");
});

Deno.test("readStaticPods() reads JSON, and a PodList only from an URL", async () => {
  const json = JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "a" },
    spec: { containers: [{ name: "c", image: "i" }] },
  });
  assert.equal((await onePod(json, "/m/a.json")).metadata.name, "a-n");
  const list =
    "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: b}\n  spec: {containers: [{name: c, image: i}]}\n";
  const fromUrl = await readStaticPods(list, {
    nodeName: "n",
    source: "http",
    origin: "http://x",
  });
  assert.deepEqual(fromUrl.errors, []);
  assert.deepEqual(fromUrl.pods.map((p) => p.metadata.name), ["b-n"]);
  // A manifest file holds a single Pod (upstream file.go tryDecodeSinglePod).
  const fromFile = await readStaticPods(list, FILE);
  assert.deepEqual(fromFile.pods, []);
  assert.equal(fromFile.errors.length, 1);
  assert.match(fromFile.errors[0]!.message, /"\/m\/x\.yaml".*invalid pod/);
});

Deno.test("readStaticPods() reads only the first YAML document and warns about the rest", async () => {
  const multi = `${WEB}\n---\n${WEB.replace("name: web", "name: second")}`;
  const { pods, errors, warnings } = await readStaticPods(multi, {
    ...FILE,
    origin: "m.yaml",
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(pods.map((p) => p.metadata.name), ["web-n"]);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    /"m\.yaml" holds 2 YAML documents; only the first/,
  );
});

Deno.test("readStaticPods() names the file and field of an invalid pod", async () => {
  const text =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec:\n  containers:\n  - name: c\n";
  const { pods, errors } = await readStaticPods(text, FILE);
  assert.equal(pods.length, 0);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof ManifestError);
  assert.equal(errors[0]!.field, "spec.containers[0].image");
  assert.match(
    errors[0]!.message,
    /"\/m\/x\.yaml".*spec\.containers\[0\]\.image: Required value/,
  );
});

Deno.test("readStaticPods() reads YAML 1.1 scalars as the upstream kubelet (sigs.k8s.io/yaml)", async () => {
  const text =
    `${WEB}  hostNetwork: yes\n  enableServiceLinks: off\n  terminationGracePeriodSeconds: 1e3\n  securityContext:\n    runAsUser: 0777\n`;
  const spec = (await onePod(text)).spec as unknown as Record<string, unknown>;
  assert.equal(spec.hostNetwork, true);
  assert.equal(spec.enableServiceLinks, false);
  assert.equal(spec.terminationGracePeriodSeconds, 1000);
  assert.deepEqual(spec.securityContext, { runAsUser: 511 });
});

Deno.test("readStaticPods() refuses annotations over 256 KiB in total (upstream ValidateAnnotations)", async () => {
  const pod = (size: number) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "big", annotations: { a: "x".repeat(size) } },
      spec: { containers: [{ name: "c", image: "i" }] },
    });
  const limit = 256 * 1024;
  assert.equal((await readStaticPods(pod(limit - 1024), FILE)).pods.length, 1);
  const big = await readStaticPods(pod(5 * 1024 * 1024), FILE);
  assert.equal(big.pods.length, 0);
  assert.equal(big.errors[0]?.field, "metadata.annotations");
  assert.match(big.errors[0]!.message, /may not be more than 262144 bytes/);
});

Deno.test("filterDuplicatePodNames() keeps the first pod of a name (upstream filterInvalidPods)", async () => {
  const read = async (name: string, origin: string) =>
    (await readStaticPods(WEB.replace("name: web", `name: ${name}`), {
      nodeName: "n",
      source: "file",
      origin,
    })).pods[0]!;
  const first = await read("web", "/m/a.yaml");
  const second = await read("web", "/m/b.yaml");
  const other = await read("db", "/m/c.yaml");
  assert.notEqual(first.metadata.uid, second.metadata.uid);
  const { pods, problems } = filterDuplicatePodNames(
    [first, second, other],
    "file",
  );
  assert.deepEqual(pods, [first, other]);
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /"default\/web-n".*duplicate pod name "web-n"/);
});

Deno.test("readStaticPods() reports YAML syntax errors naming the file", async () => {
  const { pods, errors } = await readStaticPods(
    "metadata:\n  name: [x\n",
    { ...FILE, origin: "broken.yaml" },
  );
  assert.equal(pods.length, 0);
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.message, /"broken\.yaml".*yaml: line 3/);
});

Deno.test("readStaticPods() refuses bad kinds, names, restart policies and duplicate containers", async () => {
  const pod = "apiVersion: v1\nkind: Pod\n";
  const cases: [string, RegExp | string][] = [
    [
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {}}",
      /no kind "Deployment" is registered/,
    ],
    [
      `${pod}metadata: {name: A_B}\nspec: {containers: [{name: c, image: i}]}`,
      "metadata.name",
    ],
    [
      `${pod}metadata: {name: a}\nspec: {restartPolicy: Sometimes, containers: [{name: c, image: i}]}`,
      "spec.restartPolicy",
    ],
    [`${pod}metadata: {name: a}\nspec: {containers: []}`, "spec.containers"],
    [
      `${pod}metadata: {name: a}\nspec: {initContainers: [{name: c, image: i}], containers: [{name: c, image: i}]}`,
      "spec.initContainers[0].name",
    ],
    [
      `${pod}spec: {containers: [{name: c, image: i}]}`,
      /name is needed for the pod/,
    ],
  ];
  for (const [text, want] of cases) {
    const { pods, errors } = await readStaticPods(text, FILE);
    assert.deepEqual(pods, [], text);
    if (typeof want === "string") assert.equal(errors[0]?.field, want, text);
    else assert.match(errors[0]!.message, want, text);
  }
});

Deno.test("readStaticPods() refuses the pod-level rules upstream's ValidatePodCreate adds", async () => {
  const spec = (extra: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: i}]\n${extra}`;
  const cases: [string, string][] = [
    [
      "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}}\n",
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term",
    ],
    [
      "  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n",
      "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
    ],
    [
      "  dnsPolicy: None\n  dnsConfig: {nameservers: [not-an-ip]}\n",
      'spec.dnsConfig.nameservers[0]: Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    ],
    [
      "  hostAliases: [{ip: 127.0.0.1, hostnames: [Bad_Host]}]\n",
      'spec.hostAliases[0].hostnames[0]: Invalid value: "Bad_Host"',
    ],
    [
      "  hostNetwork: true\n  securityContext: {sysctls: [{name: net.ipv4.ip_forward, value: '1'}]}\n",
      `spec.securityContext.sysctls[0].name: Invalid value: "net.ipv4.ip_forward": may not be specified when 'hostNetwork' is true`,
    ],
    [
      "  securityContext: {runAsUser: -1}\n",
      "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
    ],
    [
      "  hostUsers: false\n  hostPID: true\n",
      "spec.HostPID: Forbidden: when `hostUsers` is false",
    ],
    [
      "  readinessGates: [{conditionType: 'bad gate'}]\n",
      'spec.readinessGates[0].conditionType: Invalid value: "bad gate"',
    ],
    [
      "  schedulingGates: [{name: gate}]\n",
      "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
    ],
    [
      "  os: {name: plan9}\n",
      'spec.os: Unsupported value: "plan9": supported values: "linux", "windows"',
    ],
    [
      "  overhead: {pods: 500m}\n",
      'spec.overhead.limits[pods]: Invalid value: "500m": must be an integer',
    ],
    [
      "  ephemeralContainers: [{name: dbg, image: busybox}]\n",
      "spec.ephemeralContainers: Forbidden: cannot be set on create",
    ],
  ];
  const container = (extra: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n${extra}  containers:\n  - name: c\n    image: i\n`;
  cases.push(
    [
      "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}]}}\n",
      "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
    ],
    [
      "  dnsConfig: {nameservers: [1.1.1.1, 1.1.1.2, 1.1.1.3, 1.1.1.4]}\n",
      'spec.dnsConfig.nameservers: Invalid value: ["1.1.1.1","1.1.1.2","1.1.1.3","1.1.1.4"]: must not have more than 3 nameservers',
    ],
  );
  const inContainer: [string, string][] = [
    [
      "  restartPolicy: Never\n",
      "    resizePolicy: [{resourceName: cpu, restartPolicy: RestartContainer}]\n",
    ],
    ["", "    securityContext: {procMount: Unmasked}\n"],
  ];
  const containerWants = [
    `spec.containers[0].resizePolicy: Invalid value: "RestartContainer": must be 'NotRequired' when \`restartPolicy\` is 'Never'`,
    'spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`',
  ];
  for (const [i, [podExtra, cExtra]] of inContainer.entries()) {
    const { errors } = await readStaticPods(
      container(podExtra) + cExtra,
      FILE,
    );
    assert.ok(
      errors[0]?.message.includes(containerWants[i]!),
      errors[0]?.message,
    );
  }
  for (const [extra, want] of cases) {
    const { pods, errors } = await readStaticPods(spec(extra), FILE);
    assert.deepEqual(pods, [], extra);
    assert.ok(
      errors[0]?.message.includes(want),
      `${extra}: ${errors[0]?.message}`,
    );
  }
});

Deno.test("applyStaticPodDefaults() names, namespaces, hashes and annotates a static pod", () => {
  const pod = structuredClone(WEB_POD);
  const a = applyStaticPodDefaults(pod, {
    nodeName: "node-a",
    source: "file",
    origin: "/etc/m/web.yaml",
  });
  assert.equal(a.metadata.name, "web-node-a");
  assert.equal(a.metadata.namespace, "default");
  assert.equal(a.spec.nodeName, "node-a");
  assert.match(a.metadata.uid!, /^[0-9a-f]{32}$/);
  assert.equal(a.metadata.annotations![CONFIG_HASH_ANNOTATION], a.metadata.uid);
  assert.equal(a.metadata.annotations![CONFIG_SOURCE_ANNOTATION], "file");
  assert.equal(a.spec.restartPolicy, "Always");
  assert.equal(a.spec.terminationGracePeriodSeconds, 30);
  assert.equal(a.spec.containers[0]!.imagePullPolicy, "IfNotPresent");
  assert.deepEqual(a.spec.tolerations, [{
    operator: "Exists",
    effect: "NoExecute",
  }]);
  // The input is not mutated.
  assert.equal(pod.metadata.name, "web");
  // Same content → same UID; other node, path or content → other UID.
  const again = applyStaticPodDefaults(pod, {
    nodeName: "node-a",
    source: "file",
    origin: "/etc/m/web.yaml",
  });
  assert.equal(again.metadata.uid, a.metadata.uid);
  const otherNode = applyStaticPodDefaults(pod, {
    nodeName: "node-b",
    source: "file",
    origin: "/etc/m/web.yaml",
  });
  assert.notEqual(otherNode.metadata.uid, a.metadata.uid);
  const edited = structuredClone(pod);
  edited.spec.containers[0]!.image = "busybox:1.37";
  const b = applyStaticPodDefaults(edited, {
    nodeName: "node-a",
    source: "file",
    origin: "/etc/m/web.yaml",
  });
  assert.notEqual(b.metadata.uid, a.metadata.uid);
});

Deno.test("applyStaticPodDefaults() keeps an explicit UID and namespace; http pods get no toleration", () => {
  const pod = {
    metadata: { name: "x", namespace: "kube-system", uid: "fixed" },
    spec: { containers: [{ name: "c", image: "i" }] },
  } as Pod;
  const out = applyStaticPodDefaults(pod, {
    nodeName: "n",
    source: "http",
    origin: "http://h/p",
  });
  assert.equal(out.metadata.uid, "fixed");
  assert.equal(out.metadata.namespace, "kube-system");
  assert.equal(out.spec.tolerations, undefined);
  assert.equal(out.metadata.annotations![CONFIG_SOURCE_ANNOTATION], "http");
});

Deno.test("readStaticPods() returns defaulted pods, errors and warnings together", async () => {
  const { pods, errors, warnings } = await readStaticPods(
    `${WEB}\n---\nfoo: 1\n`,
    { nodeName: "n1", source: "file", origin: "f" },
  );
  assert.deepEqual(pods.map((p) => p.metadata.name), ["web-n1"]);
  assert.equal(errors.length, 0);
  assert.equal(warnings.length, 1);
  const bad = await readStaticPods("foo: 1\n", {
    nodeName: "n1",
    source: "file",
    origin: "f",
  });
  assert.deepEqual(bad.pods, []);
  assert.equal(bad.errors.length, 1);
});

Deno.test("applyStaticPodDefaults() gives the same manifest at two file paths two UIDs", () => {
  // upstream applyDefaults hashes the file path in, so a copied manifest is a second pod
  const pod = structuredClone(WEB_POD);
  const uid = (origin: string) =>
    applyStaticPodDefaults(pod, { nodeName: "node-a", source: "file", origin })
      .metadata.uid;
  assert.notEqual(uid("/etc/m/web.yaml"), uid("/etc/m/web-copy.yaml"));
  assert.equal(uid("/etc/m/web.yaml"), uid("/etc/m/web.yaml"));
  const fromUrl = (origin: string) =>
    applyStaticPodDefaults(pod, { nodeName: "node-a", source: "http", origin })
      .metadata.uid;
  assert.notEqual(fromUrl("http://h/a"), fromUrl("http://h/b"));
});

Deno.test("readStaticPods() gives a resource with a limit and no request its limit as request", async () => {
  const pod = await onePod(JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: {
      containers: [{
        name: "app",
        image: "busybox:1",
        resources: {
          limits: { cpu: "1", memory: "1Gi" },
          requests: { cpu: "500m" },
        },
      }],
      initContainers: [{
        name: "init",
        image: "busybox:1",
        resources: { limits: { memory: "64Mi" } },
      }],
    },
  }));
  assert.deepEqual(pod.spec.containers[0]!.resources?.requests, {
    cpu: "500m",
    memory: "1Gi",
  });
  assert.deepEqual(pod.spec.initContainers?.[0]?.resources?.requests, {
    memory: "64Mi",
  });
});
