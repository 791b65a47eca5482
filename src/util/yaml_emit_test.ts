import assert from "node:assert/strict";
import { stringify } from "yaml";
import { emitBlockYaml } from "./yaml_emit.ts";
import { seededRandom } from "./seeded_random.ts";

function reference(value: Record<string, unknown>): string {
  return stringify(value, { indentSeq: false, version: "1.1", lineWidth: 0 });
}

/** Asserts the fast writer either declines or matches the package. */
function assertMatches(value: Record<string, unknown>): string | undefined {
  const fast = emitBlockYaml(value);
  if (fast !== undefined) {
    assert.equal(fast, reference(value), JSON.stringify(value));
  }
  return fast;
}

Deno.test("emitBlockYaml() writes config-shaped documents like the yaml package", () => {
  const doc = {
    address: "0.0.0.0",
    authentication: {
      anonymous: { enabled: false },
      webhook: { cacheTTL: "2m0s", enabled: true },
      x509: {},
    },
    clusterDNS: ["10.96.0.10"],
    containerRuntimeEndpoint: "unix:///run/containerd/containerd.sock",
    enforceNodeAllocatable: [],
    evictionHard: { "imagefs.available": "15%", "memory.available": "100Mi" },
    infoBufferSize: "0",
    maxPods: 110,
    memoryThrottlingFactor: 0.9,
    oomScoreAdj: -999,
    registerWithTaints: [
      { effect: "NoSchedule", key: "a" },
      { effect: "NoExecute", key: "b", value: "" },
    ],
    reservedMemory: [{ limits: { memory: "1Gi" }, numaNode: 0 }],
    shutdownGracePeriodByPodPriority: [{}],
    tracing: { samplingRatePerMillion: 10 },
    text: ["true", "null", "1.5", "12"],
  };
  const out = assertMatches(doc);
  assert.ok(out, "this document is within the fast writer's reach");
  assert.match(
    out,
    /^registerWithTaints:\n- effect: NoSchedule\n {2}key: a\n/m,
  );
  assert.equal(emitBlockYaml({}), reference({}));
});

Deno.test("emitBlockYaml() quotes text go-yaml v2 would read as another type", () => {
  for (const text of ["yes", "On", "n", "1e3", "0777", "0o17", "0x1F"]) {
    assert.equal(emitBlockYaml({ a: text }), `a: "${text}"\n`, text);
  }
});

Deno.test("emitBlockYaml() declines what it is not sure of", () => {
  for (
    const value of [
      { a: "two words" },
      { a: "2001-01-01" },
      { a: "1:30" },
      { a: "a: b" },
      { a: "-x" },
      { a: "x:" },
      { a: 1e21 },
      { a: -0 },
      { a: null },
      { a: [[1]] },
      { "a b": 1 },
      { "1": 1 },
    ]
  ) {
    assert.equal(emitBlockYaml(value), undefined, JSON.stringify(value));
  }
});

const LEAVES: unknown[] = [
  "plain",
  "",
  "0",
  "007",
  "1.5",
  "1.",
  "true",
  "False",
  "null",
  "~",
  "10Mi",
  "5%",
  "1m0s",
  "127.0.0.1",
  "unix:///x.sock",
  "a:b",
  "key=value",
  "user@host",
  "+1",
  "./rel",
  "/abs/path",
  "_x",
  "2001-01-01",
  "1:20",
  "0x1F",
  "y",
  "x-",
  0,
  1,
  -7,
  0.25,
  -1.5,
  123456789,
  true,
  false,
];

function randomValue(rand: () => number, depth: number): unknown {
  const roll = rand();
  if (depth > 3 || roll < 0.55) {
    return LEAVES[Math.floor(rand() * LEAVES.length)];
  }
  if (roll < 0.8) return randomMap(rand, depth + 1);
  return Array.from(
    { length: Math.floor(rand() * 3) },
    () => rand() < 0.6 ? randomMap(rand, depth + 1) : randomValue(rand, 9),
  );
}

function randomMap(rand: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const n = Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) {
    const name = String(LEAVES[Math.floor(rand() * LEAVES.length)]) || "k";
    out[name] = randomValue(rand, depth);
  }
  return out;
}

Deno.test("emitBlockYaml() matches the yaml package on 3000 generated documents", () => {
  const rand = seededRandom(42);
  let fast = 0;
  for (let i = 0; i < 3000; i++) {
    if (assertMatches(randomMap(rand, 0)) !== undefined) fast++;
  }
  assert.ok(fast > 1000, `only ${fast} of 3000 written by the fast path`);
});
