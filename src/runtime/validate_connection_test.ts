import assert from "node:assert/strict";
import { CaptureLogger } from "../log/testing.ts";
import { validateRuntimeConnection } from "./connect_runtime.ts";
import { RuntimeUnavailableError, UnimplementedError } from "./errors.ts";
import { FakeRuntime } from "./testing.ts";

const options = (logger: CaptureLogger) => ({
  endpoint: "unix:///run/test.sock",
  logger,
  timeoutMs: 1000,
});

Deno.test("validateRuntimeConnection() accepts a ready CRI v1 runtime", async () => {
  await using runtime = new FakeRuntime();
  const logger = new CaptureLogger();
  assert.equal(await validateRuntimeConnection(runtime, options(logger)), true);
  assert.ok(logger.messages().includes("Connected to the container runtime"));
  assert.equal(logger.records.filter((r) => r.severity !== "info").length, 0);
});

Deno.test("validateRuntimeConnection() refuses another runtime API", async () => {
  await using runtime = new FakeRuntime();
  runtime.respond("version", () => ({
    version: "0.1.0",
    runtimeApiVersion: "v1alpha2",
  }));
  const logger = new CaptureLogger();
  assert.equal(
    await validateRuntimeConnection(runtime, options(logger)),
    false,
  );
  const error = logger.records.find((r) => r.severity === "error");
  assert.match(String(error?.fields.err), /v1alpha2.*expected "v1"/);
});

Deno.test("validateRuntimeConnection() refuses a runtime without CRI v1", async () => {
  await using runtime = new FakeRuntime();
  runtime.injectError("version", new UnimplementedError("unknown service"));
  const logger = new CaptureLogger();
  assert.equal(
    await validateRuntimeConnection(runtime, options(logger)),
    false,
  );
});

Deno.test("validateRuntimeConnection() lets an absent runtime be retried later", async () => {
  await using runtime = new FakeRuntime();
  runtime.injectError("version", new RuntimeUnavailableError("no socket"));
  const logger = new CaptureLogger();
  assert.equal(await validateRuntimeConnection(runtime, options(logger)), true);
  assert.deepEqual(
    logger.records.map((r) => [r.severity, r.msg]),
    [["warn", "Container runtime is not answering yet, will retry"]],
  );
});
