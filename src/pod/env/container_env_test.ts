import assert from "node:assert/strict";
import {
  ContainerConfigError,
  expandVars,
  makeEnvironment,
} from "./container_env.ts";
import type { Pod } from "../types.ts";

const vars = new Map([["A", "apple"], ["B", "banana"], ["EMPTY", ""]]);

const expansions: [string, string][] = [
  ["plain", "plain"],
  ["$(A)", "apple"],
  ["x-$(A)-$(B)-y", "x-apple-banana-y"],
  ["$(MISSING)", "$(MISSING)"],
  ["$$(A)", "$(A)"],
  ["$$", "$"],
  ["a$$b", "a$b"],
  ["$A", "$A"],
  ["trailing$", "trailing$"],
  ["$(A", "$(A"],
  ["$(EMPTY)x", "x"],
  ["$(A)$(A)", "appleapple"],
  ["$$$(A)", "$apple"],
  // upstream third_party/forked/golang/expansion: an empty name is looked up (and kept), a
  // nested opener is part of the name, an unclosed one is copied through
  ["$()", "$()"],
  ["$(A$(B))", "$(A$(B))"],
  ["$($(A)", "$($(A)"],
  ["x$(", "x$("],
  ["$(A)$", "apple$"],
];

for (const [input, want] of expansions) {
  Deno.test(`expandVars() expands ${JSON.stringify(input)}`, () => {
    assert.equal(expandVars(input, vars), want);
  });
}

function pod(env: NonNullable<Pod["spec"]["containers"][0]["env"]>): Pod {
  return {
    metadata: {
      name: "web",
      namespace: "prod",
      uid: "u-1",
      labels: { app: "web" },
      annotations: { note: "hi" },
    },
    spec: { containers: [{ name: "app", image: "nginx", env }] },
  };
}

Deno.test("makeEnvironment() resolves fieldRefs and expands earlier variables", () => {
  const p = pod([
    { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
    {
      name: "NS",
      valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } },
    },
    { name: "UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } },
    { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
    { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
    { name: "HOST", valueFrom: { fieldRef: { fieldPath: "status.hostIP" } } },
    {
      name: "APP",
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } },
    },
    {
      name: "NOTE",
      valueFrom: { fieldRef: { fieldPath: "metadata.annotations['note']" } },
    },
    { name: "URL", value: "http://$(IP):80/$(POD)/$(LATER)" },
    { name: "LATER", value: "x" },
  ]);
  const env = makeEnvironment(p, p.spec.containers[0]!, {
    nodeName: "node-a",
    podIP: "10.1.0.5",
    hostIP: "192.168.1.2",
  });
  assert.deepEqual(Object.fromEntries(env.map((e) => [e.key, e.value])), {
    POD: "web",
    NS: "prod",
    UID: "u-1",
    NODE: "node-a",
    IP: "10.1.0.5",
    HOST: "192.168.1.2",
    APP: "web",
    NOTE: "hi",
    URL: "http://10.1.0.5:80/web/$(LATER)",
    LATER: "x",
  });
});

Deno.test("makeEnvironment() lets a later definition of a name win", () => {
  const p = pod([{ name: "A", value: "1" }, { name: "B", value: "$(A)" }, {
    name: "A",
    value: "2",
  }]);
  const env = makeEnvironment(p, p.spec.containers[0]!, { nodeName: "n" });
  assert.deepEqual(env, [{ key: "A", value: "2" }, { key: "B", value: "1" }]);
});

Deno.test("makeEnvironment() names the field of an unsupported fieldRef", () => {
  const p = pod([{ name: "X", value: "ok" }, {
    name: "Y",
    valueFrom: { fieldRef: { fieldPath: "spec.bogus" } },
  }]);
  assert.throws(
    () => makeEnvironment(p, p.spec.containers[0]!, { nodeName: "n" }),
    (e: unknown) =>
      e instanceof ContainerConfigError &&
      e.field === "spec.containers[0].env[1].valueFrom.fieldRef.fieldPath" &&
      e.message.includes(`"spec.bogus"`),
  );
});

Deno.test("makeEnvironment() without an API server fails configMap and secret refs, optional or not, as upstream", () => {
  for (
    const valueFrom of [
      { configMapKeyRef: { name: "cm", key: "k", optional: true } },
      { secretKeyRef: { name: "cm", key: "k" } },
    ]
  ) {
    const p = pod([{ name: "X", valueFrom }]);
    assert.throws(
      () => makeEnvironment(p, p.spec.containers[0]!, { nodeName: "n" }),
      (e) =>
        e instanceof ContainerConfigError &&
        e.field.startsWith("spec.containers[0].env[0].valueFrom.") &&
        e.message.endsWith(
          `couldn't get ${
            valueFrom.configMapKeyRef ? "configMap" : "secret"
          } prod/cm, no kubeClient defined`,
        ),
    );
  }
});

function resourcePod(): Pod {
  return {
    metadata: { name: "web", namespace: "prod", uid: "u-1" },
    spec: {
      containers: [{
        name: "app",
        resources: {
          limits: { cpu: "1500m", memory: "128Mi" },
          requests: { cpu: "250m", memory: "64Mi", "ephemeral-storage": "1Gi" },
        },
        env: [
          {
            name: "CPU_LIMIT",
            valueFrom: { resourceFieldRef: { resource: "limits.cpu" } },
          },
          {
            name: "CPU_MILLI",
            valueFrom: {
              resourceFieldRef: { resource: "requests.cpu", divisor: "1m" },
            },
          },
          {
            name: "MEM_MI",
            valueFrom: {
              resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" },
            },
          },
          {
            name: "DISK",
            valueFrom: {
              resourceFieldRef: { resource: "requests.ephemeral-storage" },
            },
          },
          {
            name: "SIDE_MEM",
            valueFrom: {
              resourceFieldRef: {
                containerName: "side",
                resource: "limits.memory",
              },
            },
          },
          {
            name: "SIDE_CPU",
            valueFrom: {
              resourceFieldRef: {
                containerName: "side",
                resource: "limits.cpu",
              },
            },
          },
        ],
      }, { name: "side" }],
    },
  };
}

Deno.test("makeEnvironment() resolves resourceFieldRefs with divisors, rounding up, allocatable for unset limits", () => {
  const p = resourcePod();
  const env = makeEnvironment(p, p.spec.containers[0]!, {
    nodeName: "n",
    allocatable: { cpuMillis: 4000, memoryBytes: 8 * 2 ** 30 },
  });
  assert.deepEqual(Object.fromEntries(env.map((e) => [e.key, e.value])), {
    CPU_LIMIT: "2",
    CPU_MILLI: "250",
    MEM_MI: "128",
    DISK: String(2 ** 30),
    SIDE_MEM: String(8 * 2 ** 30),
    SIDE_CPU: "4",
  });
});

Deno.test('makeEnvironment() divides by one unit when the API server sends an unset divisor as "0"', () => {
  const p = resourcePod();
  p.spec.containers[0]!.env = [
    ["CPU_LIMIT", "limits.cpu"],
    ["CPU_REQUEST", "requests.cpu"],
    ["MEMORY_LIMIT", "limits.memory"],
  ].map(([name, resource]) => ({
    name: name!,
    valueFrom: { resourceFieldRef: { resource: resource!, divisor: "0" } },
  }));
  const env = makeEnvironment(p, p.spec.containers[0]!, { nodeName: "n" });
  assert.deepEqual(Object.fromEntries(env.map((e) => [e.key, e.value])), {
    CPU_LIMIT: "2",
    CPU_REQUEST: "1",
    MEMORY_LIMIT: String(128 * 2 ** 20),
  });
});

Deno.test("makeEnvironment() names the field of an unsupported resourceFieldRef", () => {
  const p = resourcePod();
  p.spec.containers[0]!.env = [{
    name: "X",
    valueFrom: { resourceFieldRef: { resource: "limits.gpu" } },
  }];
  assert.throws(
    () => makeEnvironment(p, p.spec.containers[0]!, { nodeName: "n" }),
    (e: unknown) =>
      e instanceof ContainerConfigError &&
      e.field === "spec.containers[0].env[0].valueFrom.resourceFieldRef" &&
      /unsupported resource "limits.gpu"/.test(e.message),
  );
});
