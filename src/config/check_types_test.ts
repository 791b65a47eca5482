import assert from "node:assert/strict";
import type { z } from "zod";
import { checkConfigTypes, typeProblemText } from "./check_types.ts";
import { parseConfigDocument } from "./read_document.ts";
import { fieldPath, isMapping } from "./envelope.ts";
import { ConfigError } from "./errors.ts";
import { KubeletConfigurationSchema } from "./schema.ts";
import { deepPartial } from "./schema_walk.ts";
import { generateFuzzInputs } from "./testing.ts";

type Outcome =
  | { ok: true; doc: Record<string, unknown>; unknownFields: string[] }
  | { ok: false; message: string; field: string | undefined };

const lenient = deepPartial(KubeletConfigurationSchema, false);
const strict = deepPartial(KubeletConfigurationSchema, true);

/** The reference: the zod decoding schema, its first issue as the message. */
function viaZod(value: Record<string, unknown>): Outcome {
  const result = lenient.safeParse(value, { reportInput: true });
  if (!result.success) {
    const issue = result.error.issues[0] as z.core.$ZodIssue;
    const input = (issue as { input?: unknown }).input;
    const field = fieldPath(issue.path);
    return {
      ok: false,
      field,
      message: typeProblemText(field, issue.message, input),
    };
  }
  const unknownFields: string[] = [];
  for (const issue of strict.safeParse(value).error?.issues ?? []) {
    if (issue.code !== "unrecognized_keys") continue;
    for (const key of issue.keys) {
      unknownFields.push(fieldPath([...issue.path, key]));
    }
  }
  const doc = result.data as Record<string, unknown>;
  return { ok: true, doc, unknownFields };
}

function viaChecker(value: Record<string, unknown>): Outcome {
  try {
    return { ok: true, ...checkConfigTypes(value) };
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return { ok: false, message: err.message, field: err.field };
  }
}

function assertAgrees(value: Record<string, unknown>, label: string): boolean {
  const ours = viaChecker(value);
  const zod = viaZod(value);
  assert.deepStrictEqual(ours, zod, label);
  if (ours.ok && zod.ok) {
    // Same field order too.
    assert.equal(JSON.stringify(ours.doc), JSON.stringify(zod.doc), label);
  }
  return ours.ok;
}

Deno.test("checkConfigTypes() agrees with the zod schema on 3000 generated documents", async () => {
  let passed = 0;
  let rejected = 0;
  for (const [i, input] of generateFuzzInputs(3000, 5).entries()) {
    let value: unknown;
    try {
      value = (await parseConfigDocument(input.text)).value;
    } catch {
      continue;
    }
    if (!isMapping(value)) continue;
    if (assertAgrees(value, `#${i} ${input.kind} ${input.field ?? ""}`)) {
      passed++;
    } else rejected++;
  }
  assert.ok(passed > 800, `only ${passed} documents passed`);
  assert.ok(rejected > 800, `only ${rejected} documents were rejected`);
});

Deno.test("checkConfigTypes() converts and reports like the zod schema", () => {
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
    ["__proto__ keys", JSON.parse('{"featureGates": {"__proto__": true}}')],
  ];
  for (const [label, value] of cases) {
    assert.ok(assertAgrees(value, label), `${label}: rejected`);
  }
  assert.deepEqual(
    viaChecker({ logging: { flushFrequency: 5e9 } }),
    { ok: true, doc: { logging: { flushFrequency: "5s" } }, unknownFields: [] },
  );
});

Deno.test("checkConfigTypes() rejects with the zod schema's message and field", () => {
  const bad: Record<string, unknown>[] = [
    { maxPods: "110" },
    { maxPods: 1.5 },
    { maxPods: NaN },
    { maxPods: -(2 ** 60) },
    { port: 2 ** 31 },
    { port: 2 ** 53 },
    { logging: { verbosity: -1 } },
    { logging: { verbosity: 2 ** 32 } },
    { logging: { flushFrequency: 1e308 } },
    { logging: { flushFrequency: true } },
    { podPidsLimit: 2 ** 60 },
    { memoryThrottlingFactor: Infinity },
    { syncFrequency: "1x" },
    { syncFrequency: 5 },
    { containerLogMaxSize: "ten" },
    { containerLogMaxSize: Infinity },
    { evictionHard: { "memory.available": 5 } },
    { evictionHard: [] },
    { systemReserved: { memory: [] } },
    { featureGates: { A: "true" } },
    { featureGates: "A=true" },
    { clusterDNS: "10.0.0.1" },
    { clusterDNS: ["a", null] },
    { registerWithTaints: [null] },
    { registerWithTaints: "x" },
    { registerWithTaints: [{ key: "k", timeAdded: 3 }] },
    { authentication: [] },
    { authentication: { webhook: true } },
    { staticPodURLHeader: { a: "b" } },
    { staticPodURLHeader: "b" },
    { maxPods: "a", address: 3 },
  ];
  for (const value of bad) {
    assert.equal(assertAgrees(value, JSON.stringify(value)), false);
  }
});
