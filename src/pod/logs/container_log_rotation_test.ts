import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { FakeRuntime } from "../../runtime/testing.ts";
import {
  ContainerLogManager,
  excessLogs,
  rotationTimestamp,
  splitUnusedLogs,
} from "./container_log_rotation.ts";

Deno.test("splitUnusedLogs() drops temporary files and uncompressed twins of .gz files", () => {
  assert.deepEqual(
    splitUnusedLogs(["a.1", "a.1.gz", "a.2", "a.3.tmp", "a.4.gz"]),
    { inUse: ["a.1.gz", "a.2", "a.4.gz"], unused: ["a.1", "a.3.tmp"] },
  );
});

Deno.test("excessLogs() keeps the newest maxFiles - 2 rotated files", () => {
  assert.deepEqual(excessLogs(["l.3", "l.1", "l.2"], 4), {
    remove: ["l.1"],
    keep: ["l.2", "l.3"],
  });
  assert.deepEqual(excessLogs(["l.1"], 1), { remove: ["l.1"], keep: [] });
});

Deno.test("rotationTimestamp() uses Go's 20060102-150405 layout", () => {
  const ms = new Date(2026, 0, 2, 3, 4, 5).getTime();
  assert.equal(rotationTimestamp(ms), "20260102-030405");
});

function setup(dir: string) {
  const runtime = new FakeRuntime();
  runtime.respond("listContainers", () => ({
    containers: [{ id: "c1", state: 1 }, { id: "c2", state: 2 }],
  }));
  runtime.respond("containerStatus", (r) => ({
    status: { id: r.containerId ?? "", logPath: `${dir}/0.log` },
  }));
  runtime.respond("reopenContainerLog", () => {
    Deno.writeTextFileSync(`${dir}/0.log`, "");
    return {};
  });
  const clock = new FakeClock(new Date(2026, 0, 2, 3, 4, 5).getTime());
  const rotated: string[] = [];
  const manager = new ContainerLogManager({
    runtime,
    clock,
    logger: new CaptureLogger(),
    onRotated: ({ containerId }) => {
      rotated.push(containerId);
      return Promise.resolve();
    },
  }, {
    maxSizeBytes: 1024,
    maxFiles: 3,
    maxWorkers: 2,
    monitorIntervalMs: 10_000,
  });
  return { runtime, manager, rotated };
}

Deno.test("ContainerLogManager rotates a big log, compresses the kept rotation and reopens the log", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/0.log`, "x".repeat(2048));
    await Deno.writeTextFile(`${dir}/0.log.20250101-000000`, "oldest");
    await Deno.writeTextFile(`${dir}/0.log.20250102-000000`, "older");
    await Deno.writeTextFile(`${dir}/0.log.20250102-000000.tmp`, "junk");
    const { runtime, manager, rotated } = setup(dir);
    await manager.rotateLogs();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(names, [
      "0.log",
      "0.log.20250102-000000.gz",
      "0.log.20260102-030405",
    ]);
    assert.equal(Deno.readTextFileSync(`${dir}/0.log`), "");
    assert.equal(
      Deno.readTextFileSync(`${dir}/0.log.20260102-030405`).length,
      2048,
    );
    const gz = await Deno.open(`${dir}/0.log.20250102-000000.gz`);
    const text = await new Response(
      gz.readable.pipeThrough(new DecompressionStream("gzip")),
    ).text();
    assert.equal(text, "older");
    // only the running container is looked at
    assert.deepEqual(
      runtime.requestsOf("containerStatus").map((r) => r.containerId),
      ["c1"],
    );
    assert.deepEqual(runtime.requestsOf("reopenContainerLog"), [{
      containerId: "c1",
    }]);
    assert.deepEqual(rotated, ["c1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ContainerLogManager rotates a log of exactly maxSizeBytes, not one byte less (upstream's size < MaxSize check)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/0.log`, "x".repeat(1023));
    const { runtime, manager, rotated } = setup(dir);
    await manager.rotateLogs();
    assert.deepEqual(rotated, []);
    await Deno.writeTextFile(`${dir}/0.log`, "x".repeat(1024));
    await manager.rotateLogs();
    assert.deepEqual(rotated, ["c1"]);
    assert.equal(runtime.requestsOf("reopenContainerLog").length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ContainerLogManager leaves small logs alone and renames back when the reopen fails", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/0.log`, "small");
    const { runtime, manager } = setup(dir);
    await manager.rotateLogs();
    assert.equal(runtime.requestsOf("reopenContainerLog").length, 0);
    await Deno.writeTextFile(`${dir}/0.log`, "y".repeat(4096));
    runtime.injectError("reopenContainerLog", new Error("unavailable"));
    await manager.rotateLogs();
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["0.log"]);
    assert.equal(Deno.readTextFileSync(`${dir}/0.log`).length, 4096);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ContainerLogManager asks the runtime for a running container's log path once, and forgets containers that stopped", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/0.log`, "small");
    const { runtime, manager, rotated } = setup(dir);
    let running = [{ id: "c1", state: 1 }, { id: "c3", state: 1 }];
    runtime.respond("listContainers", () => ({ containers: running }));
    const asked = () =>
      runtime.requestsOf("containerStatus").map((r) => r.containerId);
    await manager.rotateLogs();
    await manager.rotateLogs();
    assert.deepEqual(asked().sort(), ["c1", "c3"]);
    // the kept path still leads to a rotation once the log grows
    await Deno.writeTextFile(`${dir}/0.log`, "x".repeat(2048));
    running = [{ id: "c1", state: 1 }];
    await manager.rotateLogs();
    assert.deepEqual(rotated, ["c1"]);
    assert.deepEqual(asked().sort(), ["c1", "c3"]);
    // c3 left the running list, so it is asked about again when it is back
    running = [{ id: "c3", state: 1 }];
    await manager.rotateLogs();
    assert.deepEqual(asked().sort(), ["c1", "c3", "c3"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
