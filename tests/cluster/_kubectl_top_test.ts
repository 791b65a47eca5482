import assert from "node:assert/strict";
import { familyLabels, parseTopNodes, parseTopPods } from "./_kubectl_top.ts";

Deno.test("parseTopNodes() reads figures and <unknown>", () => {
  const rows = parseTopNodes(
    `NAME     CPU(cores)   CPU(%)      MEMORY(bytes)   MEMORY(%)
a        1250m        62%         3000Mi          12%
b        2            100%        1Gi             4%
c        <unknown>    <unknown>   <unknown>       <unknown>
`,
  );
  assert.deepEqual(Object.fromEntries(rows), {
    a: { cpuMillis: 1250, memoryBytes: 3000 * 1024 ** 2 },
    b: { cpuMillis: 2000, memoryBytes: 1024 ** 3 },
    c: {},
  });
});

Deno.test("parseTopPods() keys rows by namespace and name", () => {
  const rows = parseTopPods(
    `NAMESPACE   NAME     CPU(cores)   MEMORY(bytes)
ns          busy     99m          1Mi
ns          idle     0m           512Ki
`,
  );
  assert.deepEqual(Object.fromEntries(rows), {
    "ns/busy": { cpuMillis: 99, memoryBytes: 1024 ** 2 },
    "ns/idle": { cpuMillis: 0, memoryBytes: 512 * 1024 },
  });
});

Deno.test("familyLabels() gives each family's label-name sets from its samples", () => {
  const labels = familyLabels(`# HELP x help
# TYPE x counter
x{b="1",a="2"} 1 123
x{a="3",b="4"} 2
node_cpu 5 123
y{a="1"} 1
y 2
`);
  assert.deepEqual(Object.fromEntries(labels), {
    node_cpu: [""],
    x: ["a,b"],
    y: ["", "a"],
  });
});
