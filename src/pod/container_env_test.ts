import assert from "node:assert/strict";
import {
  ContainerConfigError,
  expandVars,
  makeEnvironment,
} from "./container_env.ts";
import type { Pod } from "./types.ts";

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
