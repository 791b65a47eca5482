import assert from "node:assert/strict";
import {
  canonicalizeDurations,
  checkConfigTypes,
  isDurationPath,
} from "./check_types.ts";
import { ConfigError } from "./errors.ts";

function rejection(
  value: Record<string, unknown>,
): [string | undefined, string] {
  try {
    checkConfigTypes(value);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return [err.field, err.message];
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

Deno.test("checkConfigTypes() names the first bad field in schema order and what it expected", () => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [
      { maxPods: "110" },
      "maxPods",
      'field maxPods: expected an int32 (a whole number), got "110"',
    ],
    [
      { maxPods: 1.5 },
      "maxPods",
      "field maxPods: expected an int32 (a whole number), got 1.5",
    ],
    [
      { maxPods: NaN },
      "maxPods",
      "field maxPods: expected an int32 (a whole number), got NaN",
    ],
    [
      { maxPods: -(2 ** 60) },
      "maxPods",
      "field maxPods: Too small: expected int to be >=-9007199254740991, got -1152921504606847000",
    ],
    [
      { port: 2 ** 31 },
      "port",
      "field port: Too big: expected number to be <=2147483647, got 2147483648",
    ],
    [
      { logging: { verbosity: -1 } },
      "logging.verbosity",
      "field logging.verbosity: Too small: expected number to be >=0, got -1",
    ],
    [
      { logging: { flushFrequency: true } },
      "logging.flushFrequency",
      'field logging.flushFrequency: expected a duration string such as "1m0s", got true',
    ],
    [
      { podPidsLimit: 2 ** 60 },
      "podPidsLimit",
      "field podPidsLimit: Too big: expected int to be <=9007199254740991, got 1152921504606847000",
    ],
    [
      { memoryThrottlingFactor: Infinity },
      "memoryThrottlingFactor",
      "field memoryThrottlingFactor: expected a float64 (a number), got Infinity",
    ],
    [
      { syncFrequency: "1x" },
      "syncFrequency",
      'field syncFrequency: time: unknown unit "x" in duration "1x", got "1x"',
    ],
    [
      { syncFrequency: 5 },
      "syncFrequency",
      'field syncFrequency: expected a duration string such as "1m0s", got 5',
    ],
    [
      { containerLogMaxSize: "ten" },
      "containerLogMaxSize",
      "field containerLogMaxSize: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got \"ten\"",
    ],
    [
      { evictionHard: { "memory.available": 5 } },
      "evictionHard.memory.available",
      "field evictionHard.memory.available: expected a string, got 5",
    ],
    [
      { evictionHard: [] },
      "evictionHard",
      "field evictionHard: expected a map of string to string, got a list",
    ],
    [
      { featureGates: { A: "true" } },
      "featureGates.A",
      'field featureGates.A: expected a boolean (true or false), got "true"',
    ],
    [
      { featureGates: "A=true" },
      "featureGates",
      'field featureGates: expected a map of feature name to boolean, got "A=true"',
    ],
    [
      { clusterDNS: "10.0.0.1" },
      "clusterDNS",
      'field clusterDNS: expected a list, got "10.0.0.1"',
    ],
    [
      { clusterDNS: ["a", null] },
      "clusterDNS[1]",
      "field clusterDNS[1]: expected a string, got null",
    ],
    [
      { registerWithTaints: [null] },
      "registerWithTaints[0]",
      "field registerWithTaints[0]: Invalid input: expected object, received null, got null",
    ],
    [
      { registerWithTaints: "x" },
      "registerWithTaints",
      'field registerWithTaints: expected a list, got "x"',
    ],
    [
      { registerWithTaints: [{ key: "k", timeAdded: 3 }] },
      "registerWithTaints[0].timeAdded",
      "field registerWithTaints[0].timeAdded: Invalid input, got 3",
    ],
    [
      { authentication: [] },
      "authentication",
      "field authentication: Invalid input: expected object, received array, got a list",
    ],
    [
      { authentication: { webhook: true } },
      "authentication.webhook",
      "field authentication.webhook: Invalid input: expected object, received boolean, got true",
    ],
    [
      { staticPodURLHeader: { a: "b" } },
      "staticPodURLHeader.a",
      'field staticPodURLHeader.a: expected a list of strings, got "b"',
    ],
    [
      { staticPodURLHeader: "b" },
      "staticPodURLHeader",
      'field staticPodURLHeader: Invalid input: expected record, received string, got "b"',
    ],
    [
      { maxPods: "a", address: 3 },
      "address",
      "field address: expected a string, got 3",
    ],
  ];
  for (const [value, field, message] of cases) {
    assert.deepEqual(rejection(value), [field, message], JSON.stringify(value));
  }
});

Deno.test("checkConfigTypes() converts, drops and lists unknown fields", () => {
  assert.deepEqual(checkConfigTypes({ logging: { flushFrequency: 5e9 } }), {
    doc: { logging: { flushFrequency: "5s" } },
    unknownFields: [],
  });
  assert.deepEqual(
    checkConfigTypes({
      systemReserved: { memory: "1Gi" },
      containerLogMaxSize: 10,
      reservedMemory: [{ numaNode: 0, limits: { memory: 5 } }],
    }).doc,
    {
      systemReserved: { memory: "1Gi" },
      containerLogMaxSize: "10",
      reservedMemory: [{ numaNode: 0, limits: { memory: "5" } }],
    },
  );
  assert.deepEqual(
    checkConfigTypes({ staticPodPath: null, featureGates: null }).doc,
    { staticPodPath: null, featureGates: null },
  );
  const checked = checkConfigTypes({
    zz: 1,
    authentication: { x509: { extra: true }, other: 1 },
    registerWithTaints: [{ key: "a", effect: "NoSchedule", bogus: 2 }],
    aa: 2,
  });
  assert.deepEqual(checked, {
    doc: {
      authentication: { x509: {} },
      registerWithTaints: [{ key: "a", effect: "NoSchedule" }],
    },
    unknownFields: [
      "authentication.x509.extra",
      "authentication.other",
      "registerWithTaints[0].bogus",
      "zz",
      "aa",
    ],
  });
  // Fields come out in schema order, whatever the input order.
  assert.deepEqual(
    Object.keys(
      checkConfigTypes({ maxPods: 1, apiVersion: "v", address: "a", kind: "k" })
        .doc,
    ),
    ["apiVersion", "kind", "address", "maxPods"],
  );
  // Like zod's records, a `__proto__` key is dropped.
  assert.deepEqual(
    checkConfigTypes(JSON.parse('{"featureGates": {"__proto__": true}}')).doc,
    { featureGates: {} },
  );
});

Deno.test("isDurationPath() and canonicalizeDurations() find the duration fields", () => {
  assert.equal(isDurationPath("syncFrequency"), true);
  assert.equal(isDurationPath("authentication.webhook.cacheTTL"), true);
  assert.equal(isDurationPath("logging.flushFrequency"), true);
  assert.equal(isDurationPath("maxPods"), false);
  assert.equal(isDurationPath("authentication.webhook"), false);
  assert.equal(isDurationPath("nope.deeper"), false);
  const doc: Record<string, unknown> = {
    syncFrequency: "60s",
    authentication: { webhook: { cacheTTL: "120s" } },
    address: "60s",
  };
  canonicalizeDurations(doc);
  assert.deepEqual(doc, {
    syncFrequency: "1m0s",
    authentication: { webhook: { cacheTTL: "2m0s" } },
    address: "60s",
  });
});
