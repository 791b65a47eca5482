import assert from "node:assert/strict";
import {
  applyApiDefaults,
  applyStaticPodDefaults,
  CONFIG_HASH_ANNOTATION,
  CONFIG_SOURCE_ANNOTATION,
  defaultPullPolicy,
  filterDuplicatePodNames,
  ManifestError,
  parseManifest,
  readStaticPods,
} from "./static_pod.ts";

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

Deno.test("parseManifest() reads a single YAML pod", async () => {
  const { pods, errors } = await parseManifest(WEB, { origin: "web.yaml" });
  assert.deepEqual(errors, []);
  assert.equal(pods.length, 1);
  assert.equal(pods[0]!.spec.containers[0]!.image, "busybox:1.36");
});

Deno.test("parseManifest() reads JSON, and a PodList only when allowed", async () => {
  const json = JSON.stringify({
    metadata: { name: "a" },
    spec: { containers: [{ name: "c", image: "i" }] },
  });
  assert.equal(
    (await parseManifest(json, { origin: "a.json" })).pods.length,
    1,
  );
  const list =
    "kind: PodList\nitems:\n- metadata: {name: b}\n  spec: {containers: [{name: c, image: i}]}\n";
  const fromUrl = await parseManifest(list, {
    origin: "http://x",
    allowPodList: true,
  });
  assert.deepEqual(fromUrl.errors, []);
  assert.deepEqual(fromUrl.pods.map((p) => p.metadata.name), ["b"]);
  // A manifest file holds a single Pod (upstream file.go tryDecodeSinglePod).
  const fromFile = await parseManifest(list, { origin: "list.yaml" });
  assert.deepEqual(fromFile.pods, []);
  assert.equal(fromFile.errors[0]?.field, "kind");
  assert.match(fromFile.errors[0]!.message, /must be "Pod", got "PodList"/);
});

Deno.test("parseManifest() reads only the first YAML document and warns about the rest", async () => {
  const multi = `${WEB}\n---\n${WEB.replace("name: web", "name: second")}`;
  const { pods, errors, warnings } = await parseManifest(multi, {
    origin: "m.yaml",
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(pods.map((p) => p.metadata.name), ["web"]);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    /"m\.yaml" holds 2 YAML documents; only the first/,
  );
});

Deno.test("parseManifest() names the file and field of an invalid pod", async () => {
  const text = "metadata: {name: bad}\nspec:\n  containers:\n  - name: c\n";
  const { pods, errors } = await parseManifest(text, { origin: "/m/x.yaml" });
  assert.equal(pods.length, 0);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof ManifestError);
  assert.equal(errors[0]!.field, "spec.containers[0].image");
  assert.match(
    errors[0]!.message,
    /"\/m\/x\.yaml".*containers\[0\]\.image" is required/,
  );
});

Deno.test("parseManifest() reads YAML 1.1 scalars as the upstream kubelet (sigs.k8s.io/yaml)", async () => {
  const text =
    `${WEB}  hostNetwork: yes\n  enableServiceLinks: off\n  terminationGracePeriodSeconds: 1e3\n  securityContext:\n    runAsUser: 0777\n`;
  const { pods, errors } = await parseManifest(text, { origin: "h.yaml" });
  assert.deepEqual(errors, []);
  const spec = pods[0]!.spec as unknown as Record<string, unknown>;
  assert.equal(spec.hostNetwork, true);
  assert.equal(spec.enableServiceLinks, false);
  assert.equal(spec.terminationGracePeriodSeconds, 1000);
  assert.deepEqual(spec.securityContext, { runAsUser: 511 });
});

Deno.test("validatePod() rejects annotations over 256 KiB in total (upstream ValidateAnnotations)", async () => {
  const pod = (size: number) =>
    JSON.stringify({
      metadata: { name: "big", annotations: { a: "x".repeat(size) } },
      spec: { containers: [{ name: "c", image: "i" }] },
    });
  const limit = 256 * 1024;
  const ok = await parseManifest(pod(limit - 1), { origin: "ok.json" });
  assert.equal(ok.pods.length, 1);
  const big = await parseManifest(pod(5 * 1024 * 1024), {
    origin: "big.json",
  });
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

Deno.test("parseManifest() reports YAML syntax errors with a line", async () => {
  const { pods, errors } = await parseManifest("metadata:\n  name: [x\n", {
    origin: "broken.yaml",
  });
  assert.equal(pods.length, 0);
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.message, /Cannot parse manifest "broken\.yaml"/);
});

Deno.test("validatePod() rejects bad kinds, names, restart policies and duplicate containers", async () => {
  const cases: [string, string][] = [
    [
      "kind: Deployment\nmetadata: {name: a}\nspec: {containers: [{name: c, image: i}]}",
      "kind",
    ],
    [
      "metadata: {name: A_B}\nspec: {containers: [{name: c, image: i}]}",
      "metadata.name",
    ],
    [
      "metadata: {name: a}\nspec: {restartPolicy: Sometimes, containers: [{name: c, image: i}]}",
      "spec.restartPolicy",
    ],
    ["metadata: {name: a}\nspec: {containers: []}", "spec.containers"],
    [
      "metadata: {name: a}\nspec: {initContainers: [{name: c, image: i}], containers: [{name: c, image: i}]}",
      "spec.containers[0].name",
    ],
    ["spec: {containers: [{name: c, image: i}]}", "metadata"],
  ];
  for (const [text, field] of cases) {
    const { errors } = await parseManifest(text, { origin: "t" });
    assert.equal(errors[0]?.field, field, text);
  }
});

Deno.test("applyStaticPodDefaults() names, namespaces, hashes and annotates a static pod", async () => {
  const pod = (await parseManifest(WEB, { origin: "w" })).pods[0]!;
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

Deno.test("applyStaticPodDefaults() keeps an explicit UID and namespace; http pods get no toleration", async () => {
  const pod = (await parseManifest(
    "metadata: {name: x, namespace: kube-system, uid: fixed}\nspec: {containers: [{name: c, image: i}]}",
    { origin: "u" },
  )).pods[0]!;
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

Deno.test("defaultPullPolicy() is Always for latest or untagged images", () => {
  assert.equal(defaultPullPolicy("busybox"), "Always");
  assert.equal(defaultPullPolicy("busybox:latest"), "Always");
  assert.equal(defaultPullPolicy("reg:5000/busybox"), "Always");
  assert.equal(defaultPullPolicy("reg:5000/busybox:1.36"), "IfNotPresent");
  assert.equal(defaultPullPolicy("busybox@sha256:abc"), "IfNotPresent");
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

Deno.test("applyStaticPodDefaults() gives the same manifest at two file paths two UIDs", async () => {
  // upstream applyDefaults hashes the file path in, so a copied manifest is a second pod
  const pod = (await parseManifest(WEB, { origin: "w" })).pods[0]!;
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

Deno.test("applyApiDefaults() gives a resource with a limit and no request its limit as request", () => {
  const out = applyApiDefaults({
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
  });
  assert.deepEqual(out.spec.containers[0]!.resources?.requests, {
    cpu: "500m",
    memory: "1Gi",
  });
  assert.deepEqual(out.spec.initContainers?.[0]?.resources?.requests, {
    memory: "64Mi",
  });
});
