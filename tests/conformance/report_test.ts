import assert from "node:assert/strict";
import {
  parseJUnit,
  regressions,
  renderSummary,
  score,
  testName,
  type TestResult,
} from "./report.ts";

// The shape Ginkgo v2 writes with --junit-report (abridged).
const XML = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="6" disabled="4" errors="0" failures="2" time="40.1">
  <testsuite name="Kubernetes e2e suite" package="/bin" tests="6">
    <testcase name="[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.2"></testcase>
    <testcase name="[It] [sig-node] Pods should get a host IP [NodeConformance] [Conformance] [sig-node, NodeConformance, Conformance]" classname="Kubernetes e2e suite" status="passed" time="4.2"></testcase>
    <testcase name="[It] [sig-node] Probing container should be restarted [NodeConformance] [sig-node, NodeConformance]" classname="Kubernetes e2e suite" status="failed" time="30.5">
      <failure message="timed out waiting for the condition &amp; more&#xA;second line" type="failed">[FAILED] timed out</failure>
      <system-err>log: stderr &quot;nsenter: can&#39;t open&quot;</system-err>
    </testcase>
    <testcase name="[It] [sig-node] Pods should cap back-off [Slow] [NodeConformance] [sig-node, Slow, NodeConformance]" classname="Kubernetes e2e suite" status="failed" time="300">
      <failure message="pod did not start" type="failed">Failed to pull image &quot;127.0.0.1:5000/e2e-test-images/nginx:1.14-4&quot;</failure>
    </testcase>
    <testcase name="[It] [sig-node] Sysctls should reject invalid sysctls [NodeConformance] [sig-node, NodeConformance]" classname="Kubernetes e2e suite" status="skipped" time="0.1">
      <skipped message="skipped - Only supported for node OS distro [gci ubuntu]"></skipped>
    </testcase>
    <testcase name="[It] [sig-node] Sysctls not selected [NodeConformance] [sig-node, NodeConformance]" classname="Kubernetes e2e suite" status="skipped" time="0">
      <skipped message="skipped"></skipped>
    </testcase>
    <testcase name="[It] [sig-apps] Deployment rolls [sig-apps]" classname="Kubernetes e2e suite" status="failed" time="1">
      <failure message="boom" type="failed"></failure>
    </testcase>
  </testsuite>
</testsuites>`;

const nodeConformance = (n: string) => n.includes("[NodeConformance]");

Deno.test("parseJUnit: selected tests with outcome, time and first message line", () => {
  const results = parseJUnit(XML, nodeConformance, [
    {
      in: "failure",
      text: "e2e-test-images/nginx:",
      why: "no nginx image here",
    },
    { in: "name", text: "Probing container should be", why: "named rule" },
  ]);
  assert.deepEqual(results, [
    {
      name:
        "[sig-node] Pods should get a host IP [NodeConformance] [Conformance]",
      outcome: "passed",
      seconds: 4.2,
      message: "",
    },
    {
      name:
        "[sig-node] Probing container should be restarted [NodeConformance]",
      outcome: "environment",
      seconds: 30.5,
      message: "named rule",
    },
    {
      name: "[sig-node] Pods should cap back-off [Slow] [NodeConformance]",
      outcome: "environment",
      seconds: 300,
      message: "no nginx image here",
    },
    {
      name:
        "[sig-node] Sysctls should reject invalid sysctls [NodeConformance]",
      outcome: "skipped",
      seconds: 0.1,
      message: "Only supported for node OS distro [gci ubuntu]",
    },
  ]);
});

Deno.test("parseJUnit: an output rule matches a failed test's log, not a passed one's", () => {
  const rule = {
    in: "output" as const,
    text: `stderr "nsenter: can't open"`,
    why: "no PID 1 here",
  };
  const results = parseJUnit(XML, nodeConformance, [rule]);
  assert.equal(
    results.find((t) => t.name.includes("Probing"))?.outcome,
    "environment",
  );
  assert.equal(
    results.find((t) => t.name.includes("Probing"))?.message,
    "no PID 1 here",
  );
  assert.equal(
    results.find((t) => t.name.includes("cap back-off"))?.outcome,
    "failed",
  );
  // the log is not part of the failure's own text
  assert.equal(
    parseJUnit(XML, nodeConformance, [{ ...rule, in: "failure" }]).find((t) =>
      t.name.includes("Probing")
    )?.outcome,
    "failed",
  );
});

Deno.test("parseJUnit: a failure's message is its first line, entities decoded", () => {
  const probe = parseJUnit(XML, nodeConformance).find((t) =>
    t.name.includes("Probing")
  );
  assert.equal(probe?.outcome, "failed");
  assert.equal(probe?.message, "timed out waiting for the condition & more");
});

Deno.test("parseJUnit: a failed suite setup is reported, a passed one is not a test", () => {
  const xml = XML.replace(
    '"[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="passed" time="0.2"></testcase>',
    '"[SynchronizedBeforeSuite]" classname="Kubernetes e2e suite" status="failed" time="0.2"><failure message="no nodes">x</failure></testcase>',
  );
  const setup = parseJUnit(xml, nodeConformance).filter((r) =>
    r.name.startsWith("[Synchronized")
  );
  assert.deepEqual(setup.map((r) => [r.outcome, r.message]), [[
    "failed",
    "no nodes",
  ]]);
  assert.equal(
    parseJUnit(XML, nodeConformance).some((r) =>
      r.name.startsWith("[Synchronized")
    ),
    false,
  );
});

Deno.test("testName drops Ginkgo's [It] and the trailing label list only", () => {
  assert.equal(
    testName("[It] [sig-node] A [NodeConformance] [sig-node, NodeConformance]"),
    "[sig-node] A [NodeConformance]",
  );
  assert.equal(
    testName("[sig-node] B [Conformance]"),
    "[sig-node] B [Conformance]",
  );
});

const r = (name: string, outcome: TestResult["outcome"]): TestResult => ({
  name,
  outcome,
  seconds: 1,
  message: outcome === "passed" ? "" : "why",
});

Deno.test("score counts each outcome", () => {
  assert.deepEqual(
    score([
      r("a", "passed"),
      r("b", "passed"),
      r("c", "failed"),
      r("d", "environment"),
    ]),
    { passed: 2, failed: 1, skipped: 0, environment: 1 },
  );
});

Deno.test("regressions: passes with upstream, fails, is skipped or missing with ours", () => {
  const upstream = [
    r("a", "passed"),
    r("b", "passed"),
    r("c", "failed"),
    r("d", "passed"),
  ];
  const ours = [r("a", "passed"), r("b", "failed"), r("c", "failed")];
  assert.deepEqual(
    regressions(upstream, ours).map((x) => [x.name, x.outcome, x.message]),
    [
      ["b", "failed", "why"],
      ["d", "failed", "not run"],
    ],
  );
});

Deno.test("renderSummary lists both scores, the regressions and every test", () => {
  const text = renderSummary([
    {
      kubelet: "upstream",
      results: [r("a", "passed"), r("b", "passed")],
      seconds: 600,
    },
    {
      kubelet: "ours",
      results: [r("a", "passed"), r("b", "failed")],
      seconds: 120,
    },
  ]);
  assert.match(
    text,
    /- upstream: 2 tests, 2 passed, 0 failed, 0 skipped, 0 environment failures \(10 min\)/,
  );
  assert.match(text, /- ours: 2 tests, 1 passed, 1 failed/);
  assert.match(
    text,
    /## Pass with upstream, not with ours \(1\)\n\n- b: failed — why/,
  );
  assert.match(
    text,
    /\| test \| upstream \| ours \|\n\| --- \| --- \| --- \|\n\| a \| passed \(1 s\) \| passed \(1 s\) \|\n\| b \| passed \(1 s\) \| failed \(1 s\): why \|/,
  );
});
