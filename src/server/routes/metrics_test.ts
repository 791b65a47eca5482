import assert from "node:assert/strict";
import { escapeLabel, metricsRoute, metricsText } from "./metrics.ts";

const SAMPLE_REGEXP =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*",?)*\})? -?[0-9.e+]+$/;

Deno.test("metricsText() writes upstream's names in the text exposition format", () => {
  const text = metricsText({
    nodeName: 'node-"a"',
    counts: { runningPods: 2, containers: { running: 3, exited: 1 } },
    process: {
      residentMemoryBytes: 1024,
      cpuSeconds: 1.5,
      startTimeSeconds: 1700000000.25,
    },
  });
  const seen = new Set<string>();
  for (const line of text.trimEnd().split("\n")) {
    const m = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
    if (m) {
      if (m[1] === "TYPE") {
        assert.ok(["gauge", "counter"].includes(m[3]!), line);
        assert.ok(!seen.has(m[2]!), `one TYPE per family: ${line}`);
        seen.add(m[2]!);
      }
      continue;
    }
    assert.match(line, SAMPLE_REGEXP);
  }
  assert.ok(text.includes('kubelet_node_name{node="node-\\"a\\""} 1\n'));
  assert.ok(text.includes("kubelet_running_pods 2\n"));
  assert.ok(
    text.includes('kubelet_running_containers{container_state="running"} 3\n'),
  );
  assert.ok(
    text.includes('kubelet_running_containers{container_state="created"} 0\n'),
  );
  assert.ok(text.includes("process_cpu_seconds_total 1.5\n"));
  assert.equal(escapeLabel('a\\b\n"c'), 'a\\\\b\\n\\"c');
});

Deno.test("metricsRoute() answers with the process figures of this process", async () => {
  const route = metricsRoute({
    nodeName: "n",
    runtimeCounts: () => Promise.resolve({ runningPods: 0, containers: {} }),
  });
  const response = await route(
    new Request("https://n/metrics"),
    new URL("https://n/metrics"),
  );
  assert.equal(
    response.headers.get("content-type"),
    "text/plain; version=0.0.4; charset=utf-8",
  );
  const text = await response.text();
  const rss = Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
  assert.ok(rss > 1_000_000, text);
  const start = Number(/^process_start_time_seconds (\S+)$/m.exec(text)?.[1]);
  assert.ok(Math.abs(start - Date.now() / 1000) < 3600, text);
});
