import assert from "node:assert/strict";
import { cadvisorMetricsText } from "./cadvisor_metrics.ts";

const app = {
  id: "/kubepods/besteffort/podu1/c1",
  name: "c1",
  image: "127.0.0.1:5000/kts/busybox:latest",
  namespace: "ns",
  pod: "web",
  container: "app",
  timeMs: 1_700_000_000_123,
  cpuCoreNanoSeconds: 2_500_000_000,
  memoryWorkingSetBytes: 100,
  memoryUsageBytes: 300,
  rssBytes: 50,
  pageFaults: 7,
  majorPageFaults: 1,
  startTimeSeconds: 1_699_999_000.5,
};
const root = {
  id: "/",
  name: "",
  image: "",
  namespace: "",
  pod: "",
  container: "",
  timeMs: 1_700_000_000_000,
  cpuCoreNanoSeconds: 9e9,
};

Deno.test("cadvisorMetricsText() writes cAdvisor's families with the kubelet's labels", () => {
  const text = cadvisorMetricsText([app, root]);
  const labels =
    'container="app",id="/kubepods/besteffort/podu1/c1",image="127.0.0.1:5000/kts/busybox:latest",name="c1",namespace="ns",pod="web"';
  const lines = text.split("\n");
  const has = (line: string) =>
    assert.ok(lines.includes(line), `missing ${line} in\n${text}`);
  has(
    `container_cpu_usage_seconds_total{${
      labels.replace(",id=", ',cpu="total",id=')
    }} 2.5 1700000000123`,
  );
  has(`container_memory_working_set_bytes{${labels}} 100 1700000000123`);
  has(`container_memory_usage_bytes{${labels}} 300 1700000000123`);
  has(`container_memory_rss{${labels}} 50 1700000000123`);
  has(
    `container_memory_failures_total{${labels},failure_type="pgmajfault",scope="container"} 1 1700000000123`
      .replace(
        `${labels},failure_type="pgmajfault",scope="container"`,
        labels.replace(",id=", ',failure_type="pgmajfault",id=').replace(
          ',pod="web"',
          ',pod="web",scope="container"',
        ),
      ),
  );
  has(`container_start_time_seconds{${labels}} 1699999000.5 1700000000123`);
  // the node is the root container, with empty labels but its id
  has(
    'container_cpu_usage_seconds_total{container="",cpu="total",id="/",image="",name="",namespace="",pod=""} 9 1700000000000',
  );
  assert.ok(lines.includes("# TYPE container_cpu_usage_seconds_total counter"));
  // a figure nobody measured has no sample
  assert.equal(
    lines.filter((l) =>
      l.startsWith("container_memory_rss{") && l.includes('id="/"')
    ).length,
    0,
  );
});

Deno.test("cadvisorMetricsText() of no cgroups is empty", () => {
  assert.equal(cadvisorMetricsText([]), "");
});
