import assert from "node:assert/strict";
import {
  CMAD_ANNOTATION,
  goArch,
  initialNode,
  reconcileExistingNode,
} from "./node_registration.ts";

const base = {
  nodeName: "node-a",
  hostname: "node-a",
  os: "linux",
  arch: "amd64",
};

Deno.test("initialNode() carries the well-known labels, --node-labels, taints and the attach/detach annotation", () => {
  const node = initialNode({
    ...base,
    nodeLabels: {
      "node.kubernetes.io/pool": "x",
      "kubernetes.io/os": "custom",
    },
    taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }],
  });
  assert.deepEqual(node.metadata.labels, {
    "beta.kubernetes.io/arch": "amd64",
    "beta.kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
    "kubernetes.io/hostname": "node-a",
    "kubernetes.io/os": "custom",
    "node.kubernetes.io/pool": "x",
  });
  assert.deepEqual(node.metadata.annotations, { [CMAD_ANNOTATION]: "true" });
  assert.deepEqual(node.spec, {
    taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }],
  });
});

Deno.test("initialNode() registers unschedulable with its taint, and without the annotation when attach/detach is off", () => {
  const node = initialNode({
    ...base,
    registerSchedulable: false,
    controllerAttachDetach: false,
  });
  assert.equal(node.metadata.annotations, undefined);
  assert.deepEqual(node.spec, {
    taints: [{ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }],
    unschedulable: true,
  });
});

Deno.test("reconcileExistingNode() restores default labels and the annotation, leaving other labels", () => {
  const initial = initialNode(base);
  const existing = {
    metadata: {
      name: "node-a",
      uid: "u1",
      labels: {
        "kubernetes.io/hostname": "old",
        "kubernetes.io/os": "linux",
        "team": "blue",
      },
    },
  };
  const { node, changed } = reconcileExistingNode(existing, initial);
  assert.equal(changed, true);
  assert.equal(node.metadata.labels!["kubernetes.io/hostname"], "node-a");
  assert.equal(node.metadata.labels!["kubernetes.io/arch"], "amd64");
  assert.equal(node.metadata.labels!["team"], "blue");
  assert.equal(node.metadata.annotations![CMAD_ANNOTATION], "true");
  assert.equal(existing.metadata.labels["kubernetes.io/hostname"], "old");
  assert.equal(reconcileExistingNode(node, initial).changed, false);
});

Deno.test("goArch() maps Deno's architectures to Go's", () => {
  assert.equal(goArch("x86_64"), "amd64");
  assert.equal(goArch("aarch64"), "arm64");
  assert.equal(goArch("riscv64"), "riscv64");
});
