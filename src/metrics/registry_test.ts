import assert from "node:assert/strict";
import { exponentialBuckets, Registry } from "./registry.ts";
import { operationType } from "./kubelet_metrics.ts";

Deno.test("Registry writes counters and cumulative histograms in the text format", () => {
  const registry = new Registry();
  const ops = registry.counter({
    name: "x_ops_total",
    help: "Ops.",
    labelNames: ["operation_type"],
  });
  const latency = registry.histogram({
    name: "x_latency_seconds",
    help: "Latency.",
    labelNames: ["operation_type"],
    buckets: [0.1, 1],
  });
  const plain = registry.histogram({ name: "x_plain_seconds", help: "Plain." });
  plain.labels();
  ops.labels('a"b\\c\nd').inc();
  const list = latency.labels("list");
  assert.equal(latency.labels("list"), list, "a child is bound once");
  for (const v of [0.05, 0.5, 0.7, 3]) list.observe(v);
  assert.equal(
    registry.text(),
    [
      "# HELP x_ops_total Ops.",
      "# TYPE x_ops_total counter",
      'x_ops_total{operation_type="a\\"b\\\\c\\nd"} 1',
      "# HELP x_latency_seconds Latency.",
      "# TYPE x_latency_seconds histogram",
      'x_latency_seconds_bucket{operation_type="list",le="0.1"} 1',
      'x_latency_seconds_bucket{operation_type="list",le="1"} 3',
      'x_latency_seconds_bucket{operation_type="list",le="+Inf"} 4',
      'x_latency_seconds_sum{operation_type="list"} 4.25',
      'x_latency_seconds_count{operation_type="list"} 4',
      "# HELP x_plain_seconds Plain.",
      "# TYPE x_plain_seconds histogram",
      'x_plain_seconds_bucket{le="0.005"} 0',
      'x_plain_seconds_bucket{le="0.01"} 0',
      'x_plain_seconds_bucket{le="0.025"} 0',
      'x_plain_seconds_bucket{le="0.05"} 0',
      'x_plain_seconds_bucket{le="0.1"} 0',
      'x_plain_seconds_bucket{le="0.25"} 0',
      'x_plain_seconds_bucket{le="0.5"} 0',
      'x_plain_seconds_bucket{le="1"} 0',
      'x_plain_seconds_bucket{le="2.5"} 0',
      'x_plain_seconds_bucket{le="5"} 0',
      'x_plain_seconds_bucket{le="10"} 0',
      'x_plain_seconds_bucket{le="+Inf"} 0',
      "x_plain_seconds_sum 0",
      "x_plain_seconds_count 0",
      "",
    ].join("\n"),
  );
  latency.remove("list");
  assert.ok(!registry.text().includes("x_latency_seconds_bucket"));
  assert.throws(() => ops.labels("a", "b"), /takes labels operation_type/);
});

Deno.test("exponentialBuckets() and operationType() follow upstream", () => {
  assert.deepEqual(exponentialBuckets(0.005, 2.5, 3), [0.005, 0.0125, 0.03125]);
  assert.equal(operationType("runPodSandbox"), "run_podsandbox");
  assert.equal(operationType("listPodSandbox"), "list_podsandbox");
  assert.equal(operationType("listContainers"), "list_containers");
  assert.equal(operationType("execSync"), "exec_sync");
});
