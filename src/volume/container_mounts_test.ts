import assert from "node:assert/strict";
import type { Pod, VolumeMount } from "../api/mod.ts";
import {
  type MountedVolume,
  mountPropagation,
  PROPAGATION,
  recursiveReadOnly,
  writersOf,
} from "./container_mounts.ts";
import { downwardApiPayload, formatMap } from "./downward_api.ts";
import { podVolumes } from "./volume_sources.ts";

Deno.test("mountPropagation() maps modes and keeps Bidirectional to privileged containers", () => {
  assert.equal(mountPropagation(undefined, false), PROPAGATION.private);
  assert.equal(mountPropagation("None", false), PROPAGATION.private);
  assert.equal(
    mountPropagation("HostToContainer", false),
    PROPAGATION.hostToContainer,
  );
  assert.equal(
    mountPropagation("Bidirectional", true),
    PROPAGATION.bidirectional,
  );
  assert.throws(
    () => mountPropagation("Bidirectional", false),
    /available only to privileged containers/,
  );
  assert.throws(
    () => mountPropagation("Sideways", true),
    /invalid MountPropagation mode/,
  );
});

const pod: Pod = {
  metadata: {
    name: "p",
    namespace: "ns",
    uid: "u1",
    labels: { b: "2", a: 'x"y' },
  },
  spec: {
    containers: [
      { name: "w", volumeMounts: [{ name: "v", mountPath: "/v" }] },
      {
        name: "r",
        volumeMounts: [{ name: "v", mountPath: "/v", readOnly: true }],
      },
      { name: "h", volumeMounts: [{ name: "h2", mountPath: "/h" }] },
      {
        name: "t",
        resources: { limits: { memory: "64Mi" }, requests: { cpu: "250m" } },
      },
    ],
    volumes: [
      { name: "v", emptyDir: {} },
      { name: "h1", hostPath: { path: "/data" } },
      { name: "h2", hostPath: { path: "/data/sub" } },
      { name: "cfg", configMap: { name: "c" } },
      {
        name: "tok",
        projected: { sources: [{ serviceAccountToken: { path: "t" } }] },
      },
    ],
  },
} as unknown as Pod;

Deno.test("writersOf() names running containers that can write the same data", () => {
  const volumes = new Map<string, MountedVolume>([
    ["v", { hostPath: "/x/v", readOnly: false }],
    ["h1", { hostPath: "/data", readOnly: false, hostPathSource: "/data" }],
    ["h2", {
      hostPath: "/data/sub",
      readOnly: false,
      hostPathSource: "/data/sub",
    }],
  ]);
  const all = new Set(["w", "r", "h", "t"]);
  assert.deepEqual(
    writersOf(pod, volumes, { name: "v", self: "t", running: all }),
    ["w"],
  );
  assert.deepEqual(
    writersOf(pod, volumes, { name: "v", self: "w", running: all }),
    [],
  );
  assert.deepEqual(
    writersOf(pod, volumes, { name: "v", self: "t", running: new Set() }),
    [],
  );
  assert.deepEqual(
    writersOf(pod, volumes, { name: "h1", self: "t", running: all }),
    ["h"],
  );
});

Deno.test("writersOf() counts sidecars, ephemeral containers and any other container list", () => {
  const volumes = new Map<string, MountedVolume>([
    ["v", { hostPath: "/x/v", readOnly: false }],
  ]);
  const writes = [{ name: "v", mountPath: "/v" }];
  const withKinds = {
    ...pod,
    spec: {
      containers: [{ name: "app" }],
      initContainers: [{
        name: "side",
        restartPolicy: "Always",
        volumeMounts: writes,
      }],
      ephemeralContainers: [{
        name: "debug",
        targetContainerName: "app",
        volumeMounts: writes,
      }],
      // a container list a later API version might add
      futureContainers: [{ name: "later", volumeMounts: writes }],
    },
  } as unknown as Pod;
  const running = new Set(["app", "side", "debug", "later"]);
  assert.deepEqual(
    writersOf(withKinds, volumes, { name: "v", self: "app", running }).sort(),
    ["debug", "later", "side"],
  );
  // a writer that is not running does not count
  assert.deepEqual(
    writersOf(withKinds, volumes, {
      name: "v",
      self: "app",
      running: new Set(["app", "side"]),
    }),
    ["side"],
  );
});

Deno.test("podVolumes() reads sources; API-backed ones are unsupported", () => {
  assert.deepEqual(podVolumes(pod).map((v) => v.source), [
    { kind: "emptyDir", medium: "" },
    { kind: "hostPath", path: "/data", type: "" },
    { kind: "hostPath", path: "/data/sub", type: "" },
    { kind: "unsupported", source: "configMap" },
    { kind: "unsupported", source: "projected serviceAccountToken" },
  ]);
});

Deno.test("downwardApiPayload() formats fields and resources as upstream", () => {
  assert.equal(formatMap({ b: "2", a: 'x"y' }), 'a="x\\"y"\nb="2"');
  const payload = downwardApiPayload(pod, {
    name: "info",
    defaultMode: 0o644,
    items: [
      { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
      {
        path: "ns",
        fieldRef: { fieldPath: "metadata.namespace" },
        mode: 0o400,
      },
      { path: "one", fieldRef: { fieldPath: "metadata.labels['b']" } },
      {
        path: "mem",
        resourceFieldRef: {
          containerName: "t",
          resource: "limits.memory",
          divisor: "1Mi",
        },
      },
      {
        path: "cpu",
        resourceFieldRef: {
          containerName: "t",
          resource: "requests.cpu",
          divisor: "1",
        },
      },
      {
        path: "cpulim",
        resourceFieldRef: {
          containerName: "t",
          resource: "limits.cpu",
          divisor: "1m",
        },
      },
    ],
  }, { node: { cpuMillis: 4000 } });
  assert.deepEqual(
    Object.fromEntries([...payload].map(([k, v]) => [k, [v.data, v.mode]])),
    {
      labels: ['a="x\\"y"\nb="2"', 0o644],
      ns: ["ns", 0o400],
      one: ["2", 0o644],
      mem: ["64", 0o644],
      cpu: ["1", 0o644],
      cpulim: ["4000", 0o644],
    },
  );
  assert.throws(
    () =>
      downwardApiPayload(pod, {
        name: "x",
        defaultMode: 0o644,
        items: [{ path: "ip", fieldRef: { fieldPath: "status.podIP" } }],
      }),
    /unsupported field path "status.podIP" for a volume/,
  );
});

Deno.test("recursiveReadOnly() follows upstream's resolveRecursiveReadOnly", () => {
  const m = (extra: Partial<VolumeMount>): VolumeMount => ({
    name: "v",
    mountPath: "/v",
    ...extra,
  });
  assert.equal(recursiveReadOnly(m({}), true), false);
  assert.equal(
    recursiveReadOnly(m({ recursiveReadOnly: "Disabled" }), true),
    false,
  );
  assert.equal(
    recursiveReadOnly(
      m({ readOnly: true, recursiveReadOnly: "IfPossible" }),
      false,
    ),
    false,
  );
  assert.equal(
    recursiveReadOnly(
      m({ readOnly: true, recursiveReadOnly: "IfPossible" }),
      true,
    ),
    true,
  );
  assert.equal(
    recursiveReadOnly(
      m({ readOnly: true, recursiveReadOnly: "Enabled" }),
      true,
    ),
    true,
  );
  assert.throws(
    () =>
      recursiveReadOnly(
        m({ readOnly: true, recursiveReadOnly: "Enabled" }),
        false,
      ),
    {
      message:
        'failed to resolve recursive read-only mode: volume "v" requested recursive read-only mode, but it is not supported by the runtime',
    },
  );
  assert.throws(
    () => recursiveReadOnly(m({ recursiveReadOnly: "IfPossible" }), true),
    /volume "v" requested recursive read-only mode, but it is not read-only$/,
  );
  assert.throws(
    () =>
      recursiveReadOnly(
        m({
          readOnly: true,
          recursiveReadOnly: "Enabled",
          mountPropagation: "HostToContainer",
        }),
        true,
      ),
    /but it is not compatible with propagation "HostToContainer"$/,
  );
  assert.throws(
    () =>
      recursiveReadOnly(
        m({
          readOnly: true,
          recursiveReadOnly: "Sometimes" as "Enabled",
        }),
        true,
      ),
    /unknown recursive read-only mode "Sometimes"$/,
  );
});
