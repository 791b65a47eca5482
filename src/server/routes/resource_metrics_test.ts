import assert from "node:assert/strict";
import {
  resourceMetricsRoute,
  resourceMetricsText,
} from "./resource_metrics.ts";

Deno.test("resourceMetricsText() writes container, pod and node figures under upstream's names", () => {
  const text = resourceMetricsText({
    node: {
      timeMs: 1_700_000_000_000,
      cpuCoreNanoSeconds: 2_250_000_000,
      memoryWorkingSetBytes: 4096,
    },
    containers: [
      {
        namespace: "ns",
        pod: "web",
        container: "a",
        timeMs: 1_700_000_000_123,
        cpuCoreNanoSeconds: 1_500_000_000,
        memoryWorkingSetBytes: 100,
        startTimeSeconds: 1_699_999_000.5,
      },
      {
        namespace: "ns",
        pod: "web",
        container: "b",
        timeMs: 1_700_000_000_456,
        cpuCoreNanoSeconds: 500_000_000,
        memoryWorkingSetBytes: 50,
      },
    ],
  }, { scrapeError: false });
  assert.match(
    text,
    /^container_cpu_usage_seconds_total\{container="a",namespace="ns",pod="web"\} 1\.5 1700000000123$/m,
  );
  assert.match(
    text,
    /^container_memory_working_set_bytes\{container="b",namespace="ns",pod="web"\} 50 1700000000456$/m,
  );
  assert.match(
    text,
    /^container_start_time_seconds\{container="a",namespace="ns",pod="web"\} 1699999000\.5 /m,
  );
  assert.doesNotMatch(text, /container_start_time_seconds\{container="b"/);
  assert.match(
    text,
    /^pod_cpu_usage_seconds_total\{namespace="ns",pod="web"\} 2 1700000000456$/m,
  );
  assert.match(
    text,
    /^pod_memory_working_set_bytes\{namespace="ns",pod="web"\} 150 /m,
  );
  assert.match(text, /^node_memory_working_set_bytes 4096 1700000000000$/m);
  // metrics-server drops a node without its CPU counter (kubectl top shows <unknown>)
  assert.match(text, /^node_cpu_usage_seconds_total 2\.25 1700000000000$/m);
  assert.match(text, /^# TYPE node_cpu_usage_seconds_total counter$/m);
  assert.match(text, /^resource_scrape_error 0$/m);
  assert.match(text, /^# TYPE container_cpu_usage_seconds_total counter$/m);
});

Deno.test("resourceMetricsRoute() reports a failed scrape as resource_scrape_error 1", async () => {
  const route = resourceMetricsRoute({
    resourceStats: () => Promise.reject(new Error("runtime down")),
  });
  const url = new URL("https://n/metrics/resource");
  const response = await route(new Request(url), url);
  assert.equal(response.status, 200);
  const text = await response.text();
  assert.match(text, /^resource_scrape_error 1$/m);
  assert.doesNotMatch(text, /^container_/m);
});
