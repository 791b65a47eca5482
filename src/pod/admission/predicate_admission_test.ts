import assert from "node:assert/strict";
import type { Node } from "../../api/mod.ts";
import { admitPod, withPluginResources } from "./predicate_admission.ts";
import type { Pod } from "../types.ts";

const node: Node = {
  metadata: {
    name: "n1",
    labels: { "kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux" },
  },
  spec: {},
  status: {
    allocatable: {
      cpu: "2",
      memory: "1Gi",
      pods: "3",
      "ephemeral-storage": "10Gi",
    },
  },
};

function pod(
  name: string,
  requests: Record<string, string> = {},
  spec: Record<string, unknown> = {},
): Pod {
  return {
    metadata: { name, namespace: "default", uid: name },
    spec: {
      containers: [{ name: "c", image: "busybox", resources: { requests } }],
      ...spec,
    },
  };
}

const verdict = (p: Pod, others: Pod[] = [], n: Node | undefined = node) => {
  const v = admitPod(p, others, n);
  return v.admit ? "admit" : `${v.reason}: ${v.message}`;
};

Deno.test("admitPod() admits what fits and refuses what does not, with upstream's reasons", () => {
  assert.equal(verdict(pod("a", { cpu: "1", memory: "512Mi" })), "admit");
  assert.equal(
    verdict(pod("big", { cpu: "1500m" }), [pod("a", { cpu: "1" })]),
    "OutOfcpu: Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000",
  );
  assert.equal(
    verdict(pod("m", { memory: "2Gi" })),
    "OutOfmemory: Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824",
  );
  assert.equal(
    verdict(pod("d"), [pod("a"), pod("b"), pod("c")]),
    "OutOfpods: Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3",
  );
  assert.deepEqual(admitPod(pod("x"), [], undefined), {
    admit: false,
    reason: "InvalidNodeInfo",
    message: "Kubelet cannot get node info.",
  });
});

Deno.test("admitPod() counts extended resources and hugepages against allocatable, skipping ones the node lacks", () => {
  const withFoo: Node = {
    ...node,
    status: {
      allocatable: {
        ...node.status!.allocatable,
        "example.com/foo": "2",
        "hugepages-2Mi": "4Mi",
      },
    },
  };
  const foo = (name: string, n: string) => pod(name, { "example.com/foo": n });
  assert.equal(verdict(foo("a", "2"), [], withFoo), "admit");
  assert.equal(
    verdict(foo("b", "2"), [foo("a", "1")], withFoo),
    "OutOfexample.com/foo: Node didn't have enough resource: example.com/foo, requested: 2, used: 1, capacity: 2",
  );
  assert.equal(
    verdict(foo("c", "3"), [], withFoo),
    "OutOfexample.com/foo: Node didn't have enough resource: example.com/foo, requested: 3, used: 0, capacity: 2",
  );
  assert.equal(
    verdict(pod("h", { "hugepages-2Mi": "6Mi" }), [], withFoo),
    "OutOfhugepages-2Mi: Node didn't have enough resource: hugepages-2Mi, requested: 6291456, used: 0, capacity: 4194304",
  );
  // A node without the resource at all: upstream drops the request (a cluster-level resource).
  assert.equal(verdict(foo("d", "5")), "admit");
  // cpu is checked first
  assert.match(
    verdict(pod("e", { cpu: "3", "example.com/foo": "3" }), [], withFoo),
    /^OutOfcpu/,
  );
});

Deno.test("admitPod() checks pod count before resources, and resources before affinity", () => {
  const both = pod("both", { cpu: "8" }, { nodeSelector: { disk: "ssd" } });
  assert.match(verdict(both), /^OutOfcpu/);
  assert.match(verdict(both, [pod("a"), pod("b"), pod("c")]), /^OutOfpods/);
});

Deno.test("admitPod() matches nodeSelector and required node affinity", () => {
  const affinity = (operator: string, values?: string[]) =>
    pod("p", {}, {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{
              matchExpressions: [{
                key: "kubernetes.io/hostname",
                operator,
                ...(values ? { values } : {}),
              }],
            }],
          },
        },
      },
    });
  assert.equal(
    verdict(pod("p", {}, { nodeSelector: { "kubernetes.io/hostname": "n1" } })),
    "admit",
  );
  assert.equal(
    verdict(pod("p", {}, { nodeSelector: { disk: "ssd" } })),
    "NodeAffinity: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
  );
  assert.equal(verdict(affinity("In", ["n1", "n2"])), "admit");
  assert.match(verdict(affinity("NotIn", ["n1"])), /^NodeAffinity/);
  assert.equal(verdict(affinity("Exists")), "admit");
  assert.match(verdict(affinity("DoesNotExist")), /^NodeAffinity/);
  assert.match(
    verdict(pod("p", {}, { nodeName: "n2" })),
    /^NodeName: Predicate NodeName failed/,
  );
});

Deno.test("admitPod() refuses another OS, conflicting host ports and untolerated NoExecute taints", () => {
  assert.equal(
    verdict(pod("w", {}, { os: { name: "windows" } })),
    "PodOSNotSupported: Failed to admit pod as the OS field doesn't match node OS",
  );
  const withPort = (name: string, hostPort: number) => ({
    ...pod(name),
    spec: {
      containers: [{
        name: "c",
        image: "busybox",
        ports: [{ containerPort: 80, hostPort }],
      }],
    },
  });
  assert.match(
    verdict(withPort("b", 8080), [withPort("a", 8080)]),
    /^NodePorts/,
  );
  assert.equal(verdict(withPort("b", 8081), [withPort("a", 8080)]), "admit");
  const tainted: Node = {
    ...node,
    spec: { taints: [{ key: "k", value: "v", effect: "NoExecute" }] },
  };
  assert.match(verdict(pod("t"), [], tainted), /^TaintToleration/);
  assert.equal(
    verdict(
      pod("t", {}, {
        tolerations: [{ key: "k", operator: "Exists", effect: "NoExecute" }],
      }),
      [],
      tainted,
    ),
    "admit",
  );
  const staticPod = pod("s");
  staticPod.metadata.annotations = { "kubernetes.io/config.source": "file" };
  assert.equal(verdict(staticPod, [], tainted), "admit");
});

Deno.test("admitPod() tolerates a NoExecute taint with Exists only when the toleration key is empty or the taint's", () => {
  // upstream Toleration.ToleratesTaint: a non-empty key must equal the taint's, whatever the operator
  const tainted: Node = {
    ...node,
    spec: { taints: [{ key: "dedicated", value: "db", effect: "NoExecute" }] },
  };
  const tolerating = (toleration: Record<string, string>) =>
    verdict(pod("t", {}, { tolerations: [toleration] }), [], tainted);
  assert.equal(
    tolerating({ key: "other", operator: "Exists", effect: "NoExecute" }),
    "TaintToleration: Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
  );
  assert.equal(
    tolerating({ key: "dedicated", operator: "Exists", effect: "NoExecute" }),
    "admit",
  );
  assert.equal(
    tolerating({ operator: "Exists", effect: "NoExecute" }),
    "admit",
  );
  assert.match(
    tolerating({ key: "dedicated", operator: "Equal", value: "web" }),
    /^TaintToleration/,
  );
  assert.equal(
    tolerating({ key: "dedicated", operator: "Equal", value: "db" }),
    "admit",
  );
});

Deno.test("admitPod() lets a toleration without an effect match every effect, and one with an effect only its own", () => {
  // upstream Toleration.ToleratesTaint: an empty effect matches all taint effects
  const tainted: Node = {
    ...node,
    spec: {
      taints: [
        { key: "node.kubernetes.io/unreachable", effect: "NoExecute" },
        { key: "node.kubernetes.io/not-ready", effect: "NoExecute" },
        { key: "maintenance", value: "yes", effect: "NoExecute" },
      ],
    },
  };
  const everything = pod("ds", {}, { tolerations: [{ operator: "Exists" }] });
  assert.equal(verdict(everything, [], tainted), "admit");
  const keyOnly = pod("k", {}, {
    tolerations: [
      { key: "node.kubernetes.io/unreachable", operator: "Exists" },
      { key: "node.kubernetes.io/not-ready", operator: "Exists" },
      { key: "maintenance", operator: "Equal", value: "yes" },
    ],
  });
  assert.equal(verdict(keyOnly, [], tainted), "admit");
  const wrongEffect = pod("w", {}, {
    tolerations: [{ operator: "Exists", effect: "NoSchedule" }],
  });
  assert.match(verdict(wrongEffect, [], tainted), /^TaintToleration/);
});

Deno.test("withPluginResources() raises allocatable to the devices a pod holds, never lowers it", () => {
  const node = {
    metadata: { name: "n" },
    status: { allocatable: { "example.com/r": "0", "example.com/s": "4" } },
  } as Node;
  const raised = withPluginResources(
    node,
    new Map([["example.com/r", 1], ["example.com/s", 2], ["example.com/t", 3]]),
  );
  assert.deepEqual(raised?.status?.allocatable, {
    "example.com/r": "1",
    "example.com/s": "4",
    "example.com/t": "3",
  });
  assert.equal(withPluginResources(node, new Map()), node);
});
