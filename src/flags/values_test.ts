import assert from "node:assert/strict";
import { createValue, isSloppyIP, type ValueKind } from "./values.ts";

function valueOf(kind: ValueKind, initial?: unknown) {
  const box: { v: unknown } = { v: initial };
  const value = createValue(kind, {
    get: () => box.v,
    set: (v) => {
      box.v = v;
    },
  });
  return { value, box };
}

function errorOf(kind: ValueKind, ...inputs: string[]): string {
  const { value } = valueOf(kind);
  try {
    for (const input of inputs) value.set(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`no error for ${inputs.join(" ")}`);
}

Deno.test("int32/int64 values accept Go base prefixes and report range errors", () => {
  const { value, box } = valueOf("int32");
  value.set("0x10");
  assert.equal(box.v, 16);
  value.set("0o17");
  assert.equal(box.v, 15);
  value.set("010");
  assert.equal(box.v, 8);
  value.set("-0b11");
  assert.equal(box.v, -3);
  value.set("1_000");
  assert.equal(box.v, 1000);
  assert.equal(
    errorOf("int32", "2147483648"),
    'strconv.ParseInt: parsing "2147483648": value out of range',
  );
  assert.equal(
    errorOf("int32", "1.5"),
    'strconv.ParseInt: parsing "1.5": invalid syntax',
  );
  assert.equal(
    errorOf("int32", ""),
    'strconv.ParseInt: parsing "": invalid syntax',
  );
  const big = valueOf("int64");
  big.value.set("2147483648");
  assert.equal(big.box.v, 2147483648);
});

Deno.test("bool values accept Go's ParseBool words only", () => {
  const { value, box } = valueOf("bool");
  for (const word of ["1", "t", "T", "TRUE", "true", "True"]) {
    value.set("false");
    value.set(word);
    assert.equal(box.v, true, word);
  }
  for (const word of ["0", "f", "F", "FALSE", "false", "False"]) {
    value.set("true");
    value.set(word);
    assert.equal(box.v, false, word);
  }
  assert.equal(
    errorOf("bool", "yes"),
    'strconv.ParseBool: parsing "yes": invalid syntax',
  );
});

Deno.test("duration values store Go duration text", () => {
  const { value, box } = valueOf("duration");
  value.set("90s");
  assert.equal(box.v, "1m30s");
  value.set("0");
  assert.equal(box.v, "0s");
  assert.equal(errorOf("duration", "5"), 'time: missing unit in duration "5"');
  assert.equal(errorOf("duration", "x"), 'time: invalid duration "x"');
});

Deno.test("level (-v) parses base-10 uint31", () => {
  const { value, box } = valueOf("level");
  value.set("10");
  assert.equal(box.v, 10);
  assert.equal(value.text(), "10");
  assert.equal(
    errorOf("level", "0x1"),
    'strconv.ParseUint: parsing "0x1": invalid syntax',
  );
  assert.equal(
    errorOf("level", "2147483648"),
    'strconv.ParseUint: parsing "2147483648": value out of range',
  );
});

Deno.test("stringSlice: the first set replaces the default, later sets append (CSV)", () => {
  const { value, box } = valueOf("stringSlice", ["pods"]);
  assert.equal(value.text(), "[pods]");
  value.set("a");
  assert.deepEqual(box.v, ["a"]);
  value.set('b,"c,d"');
  assert.deepEqual(box.v, ["a", "b", "c,d"]);
  assert.equal(value.text(), '[a,b,"c,d"]');
  value.set("");
  assert.deepEqual(box.v, ["a", "b", "c,d"]);
  const fresh = valueOf("stringSlice", ["pods"]);
  fresh.value.set("");
  assert.deepEqual(fresh.box.v, []);
  assert.equal(
    errorOf("stringSlice", 'a"b'),
    'parse error on line 1, column 2: bare " in non-quoted-field',
  );
  assert.equal(
    errorOf("stringSlice", '"a"b'),
    'parse error on line 1, column 3: extraneous or missing " in quoted-field',
  );
});

Deno.test("mapStringString: split on commas, trimmed, first set clears, later sets merge", () => {
  const { value, box } = valueOf("mapStringString", { memory: "1Gi" });
  value.set(" cpu = 100m , memory=1Gi,,");
  assert.deepEqual(box.v, { cpu: "100m", memory: "1Gi" });
  value.set("pid=1000,a=b=c");
  assert.deepEqual(box.v, {
    cpu: "100m",
    memory: "1Gi",
    pid: "1000",
    a: "b=c",
  });
  assert.equal(value.text(), "a=b=c,cpu=100m,memory=1Gi,pid=1000");
  assert.equal(
    errorOf("mapStringString", "cpu"),
    "malformed pair, expect string=string",
  );
  // cliflag skips only empty items: a blank one is a malformed pair.
  assert.equal(
    errorOf("mapStringString", "cpu=1, "),
    "malformed pair, expect string=string",
  );
});

Deno.test("mapStringString NoSplit keeps commas in the value", () => {
  const { value, box } = valueOf("mapStringStringNoSplit");
  value.set("full-pcpus-only=true,x");
  value.set("b=c");
  assert.deepEqual(box.v, { "full-pcpus-only": "true,x", b: "c" });
  assert.equal(
    errorOf("mapStringStringNoSplit", "novalue"),
    "malformed pair, expect string=string",
  );
});

Deno.test("mapStringBool parses feature gate lists", () => {
  const { value, box } = valueOf("mapStringBool", { Old: true });
  value.set("A=true, B = false,");
  assert.deepEqual(box.v, { A: true, B: false });
  assert.equal(value.text(), "A=true,B=false");
  assert.equal(
    errorOf("mapStringBool", "A"),
    "malformed pair, expect string=bool",
  );
  assert.equal(
    errorOf("mapStringBool", "A=yes"),
    'invalid value of A: yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
  );
});

Deno.test("langle map parses eviction thresholds", () => {
  const { value, box } = valueOf("langleMap");
  value.set("memory.available<100Mi,nodefs.available<10%");
  assert.deepEqual(box.v, {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
  });
  assert.equal(value.text(), "memory.available<100Mi,nodefs.available<10%");
  assert.equal(
    errorOf("langleMap", "memory.available=1"),
    "malformed pair, expect string<string",
  );
});

Deno.test("colon multimap appends values per key", () => {
  const { value, box } = valueOf("colonMultimap");
  value.set("a:hello,b:again,c:world");
  value.set("b:beautiful");
  assert.deepEqual(box.v, {
    a: ["hello"],
    b: ["again", "beautiful"],
    c: ["world"],
  });
  assert.equal(value.text(), "a:hello,b:again,b:beautiful,c:world");
  assert.equal(
    errorOf("colonMultimap", "a"),
    "malformed pair, expect string:string",
  );
});

Deno.test("configurationMap never clears and accepts keys without =", () => {
  const { value, box } = valueOf("configurationMap", { keep: "1" });
  value.set("a=b,c");
  value.set("a=z");
  assert.deepEqual(box.v, { keep: "1", a: "z", c: "" });
});

Deno.test("taints: each set replaces the list; removals dropped; errors upstream-worded", () => {
  const { value, box } = valueOf("taints");
  value.set("a=b:NoSchedule,c:NoExecute,gone-");
  assert.deepEqual(box.v, [
    { key: "a", value: "b", effect: "NoSchedule" },
    { key: "c", effect: "NoExecute" },
  ]);
  assert.equal(value.text(), "a=b:NoSchedule,c=:NoExecute");
  value.set("x:PreferNoSchedule");
  assert.deepEqual(box.v, [{ key: "x", effect: "PreferNoSchedule" }]);
  value.set("");
  assert.equal(box.v, undefined);
  assert.equal(
    errorOf("taints", "a=b:Bad"),
    "invalid taint effect: Bad, unsupported taint effect",
  );
  assert.equal(errorOf("taints", "a"), "invalid taint spec: a");
  assert.match(
    errorOf("taints", "a=b"),
    /^invalid taint spec: a=b, name part must consist of/,
  );
  assert.equal(
    errorOf("taints", "a=b=c:NoSchedule"),
    "invalid taint spec: a=b=c:NoSchedule",
  );
  assert.equal(errorOf("taints", "a:b:c"), "invalid taint spec: a:b:c");
  assert.equal(
    errorOf("taints", "a:NoSchedule,a=v:NoSchedule"),
    "duplicated taints with the same key and effect: {a v NoSchedule <nil>}",
  );
  assert.match(
    errorOf("taints", "a=b/c:NoSchedule"),
    /^invalid taint spec: a=b\/c:NoSchedule, a valid label must be an empty string or consist of/,
  );
  assert.match(
    errorOf("taints", "-a:NoSchedule"),
    /^invalid taint spec: -a:NoSchedule, name part must consist of/,
  );
});

Deno.test("reservedMemory parses NUMA entries separated by ';'", () => {
  const { value, box } = valueOf("reservedMemory");
  value.set("0:memory=1Gi,hugepages-1M=2Gi;1:memory=2Gi");
  value.set("2:memory=1");
  assert.deepEqual(box.v, [
    { numaNode: 0, limits: { memory: "1Gi", "hugepages-1M": "2Gi" } },
    { numaNode: 1, limits: { memory: "2Gi" } },
    { numaNode: 2, limits: { memory: "1" } },
  ]);
  assert.equal(
    value.text(),
    "0:hugepages-1M=2Gi,memory=1Gi,1:memory=2Gi,2:memory=1",
  );
  const fmt =
    "the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got ";
  assert.equal(errorOf("reservedMemory", "memory=1Gi"), fmt + "memory=1Gi");
  assert.equal(
    errorOf("reservedMemory", "x:memory=1Gi"),
    "failed to convert the NUMA node ID, exptected integer, got x",
  );
  assert.equal(
    errorOf("reservedMemory", "0:memory"),
    "the reserved limit has incorrect value, expected type=quantatity, got memory",
  );
  assert.equal(
    errorOf("reservedMemory", "0:cpu=1"),
    'memory type conversion error, unknown type: "cpu"',
  );
  assert.equal(
    errorOf("reservedMemory", "0:memory=lots"),
    "failed to parse the quantatity, expected quantatity, got lots",
  );
  assert.equal(
    errorOf("reservedMemory", "", "0:memory=1Gi"),
    "no target (nil pointer to *[]MemoryReservation",
  );
});

Deno.test("vmodule appends pattern=N items", () => {
  const { value, box } = valueOf("vmodule", [{
    filePattern: "x",
    verbosity: 1,
  }]);
  value.set("a=2,b*=3,");
  assert.deepEqual(box.v, [
    { filePattern: "x", verbosity: 1 },
    { filePattern: "a", verbosity: 2 },
    { filePattern: "b*", verbosity: 3 },
  ]);
  assert.equal(value.text(), "x=1,a=2,b*=3");
  assert.equal(
    errorOf("vmodule", "a"),
    '"a" does not have the pattern=N format',
  );
  assert.equal(
    errorOf("vmodule", "=1"),
    '"=1" does not have the pattern=N format',
  );
  assert.equal(
    errorOf("vmodule", "a=x"),
    'parsing verbosity in "a=x": strconv.ParseUint: parsing "x": invalid syntax',
  );
});

Deno.test("ip values check the address and keep the text", () => {
  const { value, box } = valueOf("ip", "0.0.0.0");
  value.set("::1");
  assert.equal(box.v, "::1");
  value.set("010.001.002.003");
  assert.equal(box.v, "010.001.002.003");
  value.set("");
  assert.equal(box.v, "010.001.002.003");
  assert.equal(errorOf("ip", "1.2.3"), '"1.2.3" is not a valid IP address');
  assert.equal(
    errorOf("ip", "256.0.0.1"),
    '"256.0.0.1" is not a valid IP address',
  );
  assert.equal(isSloppyIP("fe80::1%eth0"), false);
});

Deno.test("quantity values check the quantity syntax", () => {
  const { value, box } = valueOf("quantity");
  value.set("1Mi");
  assert.equal(box.v, "1Mi");
  assert.equal(
    errorOf("quantity", "1 Mi"),
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  );
});

Deno.test("Go flag values (cAdvisor) use Go's flag error words", () => {
  assert.equal(errorOf("goInt", "x"), "parse error");
  assert.equal(errorOf("goInt", "99999999999999999999"), "value out of range");
  assert.equal(errorOf("goBool", "x"), "parse error");
  assert.equal(errorOf("goDuration", "x"), "parse error");
  const { value, box } = valueOf("goDuration");
  value.set("2m");
  assert.equal(box.v, "2m0s");
});

Deno.test("float64 and uint values parse like strconv", () => {
  const f = valueOf("float64");
  f.value.set("0.5");
  assert.equal(f.box.v, 0.5);
  assert.equal(
    errorOf("float64", "x"),
    'strconv.ParseFloat: parsing "x": invalid syntax',
  );
  const u = valueOf("uint");
  u.value.set("0x10");
  assert.equal(u.box.v, 16);
  assert.equal(
    errorOf("uint", "-1"),
    'strconv.ParseUint: parsing "-1": invalid syntax',
  );
});
