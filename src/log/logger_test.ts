import assert from "node:assert/strict";
import { createLogger } from "./mod.ts";
import { CaptureLogger } from "./testing.ts";

const FIXED = Date.UTC(2026, 11, 2, 8, 12, 40, 123) + 0.456;

function capture(options: Parameters<typeof createLogger>[0] = {}) {
  const lines: string[] = [];
  const logger = createLogger({
    now: () => FIXED,
    stderr: (l) => lines.push(l),
    ...options,
  });
  return { lines, logger };
}

Deno.test("createLogger() writes klog text headers", () => {
  const { lines, logger } = capture();
  logger.info("Starting kubelet", { version: "v1.34.0", pods: 3 });
  assert.equal(lines.length, 1);
  const pid = String(Deno.pid).padStart(7, " ");
  assert.match(
    lines[0]!,
    new RegExp(
      `^I1202 08:12:40\\.123456 ${pid} logger_test\\.ts:\\d+\\] "Starting kubelet" version="v1\\.34\\.0" pods=3$`,
    ),
  );
});

Deno.test("createLogger() marks severities and formats errors", () => {
  const { lines, logger } = capture();
  logger.warn("careful");
  logger.error("command failed", { err: new Error('bad "flag"') });
  assert.ok(lines[0]!.startsWith("W1202 "));
  assert.ok(lines[1]!.startsWith("E1202 "));
  assert.ok(lines[1]!.endsWith('"command failed" err="bad \\"flag\\""'));
});

Deno.test("createLogger() gates v(n) by verbosity", () => {
  const { lines, logger } = capture({ verbosity: 2 });
  assert.equal(logger.v(2).enabled, true);
  assert.equal(logger.v(3).enabled, false);
  logger.v(1).info("shown");
  logger.v(5).info("hidden");
  assert.equal(lines.length, 1);
});

Deno.test("createLogger() applies vmodule to the calling file", () => {
  const { lines, logger } = capture({
    verbosity: 0,
    vmodule: [{ pattern: "logger_*", level: 4 }],
  });
  logger.v(4).info("from this file");
  logger.v(5).info("too verbose");
  assert.equal(lines.length, 1);
  const other = capture({ vmodule: [{ pattern: "pod_workers", level: 9 }] });
  other.logger.v(1).info("not matched");
  assert.equal(other.lines.length, 0);
});

Deno.test("createLogger() emits component-base JSON", () => {
  const { lines, logger } = capture({ format: "json" });
  logger.with({ pod: "default/web" }).info("Pod started", { attempt: 1 });
  logger.error("failed", { err: new Error("boom") });
  const first = JSON.parse(lines[0]!);
  assert.equal(first.ts, FIXED / 1000);
  assert.match(first.caller, /^logger_test\.ts:\d+$/);
  assert.equal(first.msg, "Pod started");
  assert.equal(first.v, 0);
  assert.equal(first.pod, "default/web");
  assert.equal(first.attempt, 1);
  const second = JSON.parse(lines[1]!);
  assert.equal(second.err, "boom");
  assert.equal("v" in second, false);
});

Deno.test("CaptureLogger keeps records with inherited fields", () => {
  const log = new CaptureLogger();
  log.with({ pod: "a" }).v(3).info("hello", { n: 1 });
  assert.deepEqual(log.records, [
    {
      severity: "info",
      verbosity: 3,
      msg: "hello",
      fields: { pod: "a", n: 1 },
    },
  ]);
});
