import assert from "node:assert/strict";
import { isCanceled, isUnavailable, NotFoundError } from "./errors.ts";
import { FAKE_RUNTIME_NAME, FakeRuntime } from "./testing.ts";

Deno.test("FakeRuntime answers like a ready CRI v1 runtime until told otherwise", async () => {
  await using runtime = new FakeRuntime();
  const version = await runtime.version({ version: "0.1.0" });
  assert.equal(version.runtimeName, FAKE_RUNTIME_NAME);
  assert.equal(version.runtimeApiVersion, "v1");
  const { status } = await runtime.status({});
  assert.deepEqual(
    status?.conditions.map((c) => [c.type, c.status]),
    [["RuntimeReady", true], ["NetworkReady", true]],
  );
  const list = await runtime.listContainers({});
  assert.deepEqual(list.containers, []);
  assert.deepEqual(runtime.calls, ["version", "status", "listContainers"]);
});

Deno.test("FakeRuntime.respond() scripts replies and requests are recorded", async () => {
  await using runtime = new FakeRuntime();
  runtime.respond("pullImage", (request) => ({
    imageRef: `sha256:${request.image?.image}`,
  }));
  const signal = new AbortController().signal;
  const pulled = await runtime.pullImage({ image: { image: "busybox" } }, {
    signal,
    timeoutMs: 5,
  });
  assert.equal(pulled.imageRef, "sha256:busybox");
  assert.deepEqual(runtime.requestsOf("pullImage"), [{
    image: { image: "busybox" },
  }]);
  assert.equal(runtime.requests[0]?.options?.timeoutMs, 5);
  runtime.respond("getContainerEvents", () => [
    { containerId: "a" },
    { containerId: "b" },
  ]);
  const seen: string[] = [];
  for await (const event of runtime.getContainerEvents({})) {
    seen.push(event.containerId);
  }
  assert.deepEqual(seen, ["a", "b"]);
});

Deno.test("FakeRuntime.injectError() fails the next calls of one method, in order", async () => {
  await using runtime = new FakeRuntime();
  runtime.injectError("stopContainer", new NotFoundError("gone"));
  runtime.injectError("stopContainer", new Error("second"));
  await assert.rejects(
    runtime.stopContainer({ containerId: "c" }),
    NotFoundError,
  );
  await assert.rejects(runtime.stopContainer({ containerId: "c" }), /second/);
  await runtime.stopContainer({ containerId: "c" });
  await runtime.removeContainer({ containerId: "c" });
  assert.deepEqual(runtime.calls, [
    "stopContainer",
    "stopContainer",
    "stopContainer",
    "removeContainer",
  ]);
});

Deno.test("FakeRuntime rejects aborted calls as Canceled and calls after close() as Unavailable", async () => {
  const runtime = new FakeRuntime();
  await assert.rejects(
    runtime.version({}, { signal: AbortSignal.abort() }),
    isCanceled,
  );
  await runtime.close();
  await runtime.close();
  await assert.rejects(runtime.status({}), isUnavailable);
});
