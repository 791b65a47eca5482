import assert from "node:assert/strict";
import {
  keyPaths,
  maskOutput,
  metricNames,
  podOrder,
  podShape,
} from "./_kubectl_diff.ts";

Deno.test("maskOutput() masks the side's names and the values that vary by run", () => {
  const masks = { ns: "ns-a", node: "node-a", ip: "10.1.0.1" };
  assert.equal(
    maskOutput(
      "2026-12-03T07:55:00.12345Z tick 17 in ns-a on node-a at 10.1.0.1 via 127.0.0.1:40123\n",
      masks,
    ),
    "<time> tick <n> in <ns> on <node> at <node-ip> via 127.0.0.1:<port>\n",
  );
  assert.equal(maskOutput("line-1\n", masks), "line-1\n");
});

Deno.test("keyPaths() gives the shape of a document, merging array elements", () => {
  assert.deepEqual(
    keyPaths({ b: 1, a: { c: [{ x: 1 }, { y: 2 }], d: null } }),
    ["a", "a.c", "a.c[].x", "a.c[].y", "a.d", "b"],
  );
  assert.deepEqual(keyPaths([]), []);
});

Deno.test("podShape() finds a pod by name in a PodList", () => {
  const list = JSON.stringify({
    items: [{ metadata: { name: "a" } }, { metadata: { name: "b", uid: "u" } }],
  });
  assert.deepEqual(podShape(list, "b"), [
    "metadata",
    "metadata.name",
    "metadata.uid",
  ]);
  assert.equal(podShape(list, "c"), undefined);
});

Deno.test("metricNames() reads the families from the TYPE lines", () => {
  const text = [
    "# HELP b_total B.",
    "# TYPE b_total counter",
    'b_total{x="1"} 2',
    "# TYPE a gauge",
    "a 1",
  ].join("\n");
  assert.deepEqual(metricNames(text), ["a", "b_total"]);
});

Deno.test("podOrder() gives the order of conditions and container statuses", () => {
  const list = JSON.stringify({
    items: [{
      metadata: { name: "p" },
      status: {
        conditions: [{ type: "Ready" }, { type: "ContainersReady" }],
        containerStatuses: [{ name: "b" }, { name: "a" }],
      },
    }],
  });
  assert.deepEqual(podOrder(list, "p"), {
    conditions: ["Ready", "ContainersReady"],
    containerStatuses: ["b", "a"],
  });
  assert.equal(podOrder(list, "q"), undefined);
});
