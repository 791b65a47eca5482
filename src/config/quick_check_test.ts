import assert from "node:assert/strict";
import { parseYamlSubset, UNSUPPORTED } from "../util/yaml_subset.ts";
import { checkDocumentTypes, parseConfigText } from "./decode.ts";
import { isMapping } from "./envelope.ts";
import { quickCheckDocument } from "./quick_check.ts";
import { generateFuzzInputs } from "./testing.ts";

type ZodOutcome =
  | { ok: true; doc: Record<string, unknown>; unknownFields: string[] }
  | { ok: false };

function viaZod(value: Record<string, unknown>): ZodOutcome {
  try {
    return { ok: true, ...checkDocumentTypes(value) };
  } catch {
    return { ok: false };
  }
}

/** The quick check must accept only what zod accepts, with the same result. */
function assertAgrees(value: Record<string, unknown>, label: string): boolean {
  const quick = quickCheckDocument(value);
  if (quick === undefined) return false;
  const zod = viaZod(value);
  assert.ok(zod.ok, `${label}: quick check passed what zod rejects`);
  assert.deepStrictEqual(quick.doc, zod.doc, label);
  assert.equal(JSON.stringify(quick.doc), JSON.stringify(zod.doc), label);
  assert.deepStrictEqual(quick.unknownFields, zod.unknownFields, label);
  return true;
}

Deno.test("quickCheckDocument() agrees with zod on 3000 generated documents", () => {
  let quick = 0;
  let zodOnly = 0;
  for (const [i, input] of generateFuzzInputs(3000, 5).entries()) {
    let value: unknown;
    try {
      value = parseConfigText(input.text).value;
    } catch {
      continue;
    }
    if (!isMapping(value)) continue;
    if (assertAgrees(value, `#${i} ${input.kind} ${input.field ?? ""}`)) {
      quick++;
    } else if (viaZod(value).ok) zodOnly++;
  }
  assert.ok(quick > 800, `quick check took only ${quick} documents`);
  // What zod alone accepts is a narrow set of oddities, not a blind spot.
  assert.ok(zodOnly < quick / 20, `zod alone accepted ${zodOnly}`);
});

Deno.test("quickCheckDocument() converts and reports like zod", () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ["flush frequency in nanoseconds", { logging: { flushFrequency: 5e9 } }],
    ["numeric quantity", {
      systemReserved: { memory: "1Gi" },
      containerLogMaxSize: 10,
    }],
    ["resource list", {
      reservedMemory: [{ numaNode: 0, limits: { memory: 5 } }],
    }],
    ["nulls", {
      staticPodPath: null,
      authentication: null,
      featureGates: null,
    }],
    ["taint timeAdded null", {
      registerWithTaints: [{ key: "k", effect: "NoSchedule", timeAdded: null }],
    }],
    ["nested unknown fields", {
      zz: 1,
      authentication: { x509: { extra: true }, other: 1 },
      registerWithTaints: [{ key: "a", effect: "NoSchedule", bogus: 2 }],
      aa: 2,
    }],
    ["field order", { maxPods: 1, apiVersion: "v", address: "a", kind: "k" }],
  ];
  for (const [label, value] of cases) {
    assert.ok(assertAgrees(value, label), `${label}: the quick check gave up`);
  }
  const flush = quickCheckDocument({ logging: { flushFrequency: 5e9 } });
  assert.deepEqual(flush?.doc, { logging: { flushFrequency: "5s" } });
});

Deno.test("quickCheckDocument() gives up wherever zod reports an error", () => {
  const bad: Record<string, unknown>[] = [
    { maxPods: "110" },
    { maxPods: 1.5 },
    { port: 2 ** 31 },
    { logging: { verbosity: -1 } },
    { memoryThrottlingFactor: Infinity },
    { syncFrequency: "1x" },
    { containerLogMaxSize: "ten" },
    { evictionHard: { "memory.available": 5 } },
    { featureGates: { A: "true" } },
    { clusterDNS: "10.0.0.1" },
    { clusterDNS: ["a", null] },
    { registerWithTaints: [null] },
    { authentication: [] },
    { staticPodURLHeader: { a: "b" } },
  ];
  for (const value of bad) {
    assert.equal(quickCheckDocument(value), undefined, JSON.stringify(value));
    assert.equal(viaZod(value).ok, false, JSON.stringify(value));
  }
});

Deno.test("the kubeadm and example configs take the fast decode path", async () => {
  for (
    const file of [
      "../../tests/fixtures/kubeadm_config.yaml",
      "../../examples/kubelet-config.yaml",
    ]
  ) {
    const text = await Deno.readTextFile(new URL(file, import.meta.url));
    const value = parseYamlSubset(text);
    assert.notEqual(value, UNSUPPORTED, `${file}: outside the YAML subset`);
    assert.ok(isMapping(value));
    assert.ok(assertAgrees(value, file), `${file}: quick check gave up`);
  }
});
