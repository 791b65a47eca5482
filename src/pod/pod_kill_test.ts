import assert from "node:assert/strict";
import { containerGracePeriod } from "./pod_kill.ts";
import type { Container, Pod } from "./types.ts";

const container: Container = {
  name: "app",
  image: "nginx",
  livenessProbe: {
    exec: { command: ["true"] },
    terminationGracePeriodSeconds: 7,
  },
};

function pod(meta: Partial<Pod["metadata"]> = {}, grace?: number): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1", ...meta },
    spec: {
      containers: [container],
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
    },
  };
}

const cases: {
  name: string;
  pod: Pod | undefined;
  options: Parameters<typeof containerGracePeriod>[2];
  want: number;
}[] = [
  { name: "defaults to 30s", pod: pod(), options: {}, want: 30 },
  { name: "uses the spec", pod: pod({}, 12), options: {}, want: 12 },
  {
    name: "deletion grace wins over the spec",
    pod: pod({ deletionGracePeriodSeconds: 4 }, 12),
    options: {},
    want: 4,
  },
  {
    name: "probe grace wins for liveness kills",
    pod: pod({}, 12),
    options: { reason: "LivenessProbe" },
    want: 7,
  },
  {
    name: "deletion grace beats the probe grace",
    pod: pod({ deletionGracePeriodSeconds: 3 }, 12),
    options: { reason: "LivenessProbe" },
    want: 3,
  },
  {
    name: "pod-level override wins",
    pod: pod({}, 12),
    options: { gracePeriodOverride: 1 },
    want: 1,
  },
  {
    name: "recorded grace when the spec is gone",
    pod: undefined,
    options: { recorded: 45 },
    want: 45,
  },
];

for (const c of cases) {
  Deno.test(`containerGracePeriod() ${c.name}`, () => {
    assert.equal(containerGracePeriod(c.pod, container, c.options), c.want);
  });
}
