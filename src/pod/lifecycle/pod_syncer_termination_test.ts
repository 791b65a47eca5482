import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { createSimRuntime, type SimScenario } from "../../runtime/sim/mod.ts";
import { createPodStatusManager } from "../../status/mod.ts";
import { createPodSyncer, type PodSyncerDeps } from "./pod_syncer.ts";
import type { Container, Pod, PodWork } from "../types.ts";

async function setup(
  scenario: SimScenario,
  options: { rootDir?: boolean; deps?: Partial<PodSyncerDeps> } = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "kts-term-sync-" });
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = createSimRuntime({ clock, scenario });
  const statusManager = createPodStatusManager();
  const syncer = createPodSyncer(
    {
      runtime,
      images: runtime,
      clock,
      logger: new CaptureLogger(),
      statusManager,
      ...options.deps,
    },
    {
      podLogsDir: `${dir}/logs`,
      ...(options.rootDir === false ? {} : { rootDir: `${dir}/root` }),
      serializeImagePulls: true,
      nodeName: "node-a",
    },
  );
  return {
    dir,
    clock,
    runtime,
    statusManager,
    syncer,
    signal: new AbortController().signal,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

function pod(
  containers: Container[],
  restartPolicy: Pod["spec"]["restartPolicy"] = "Never",
): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1" },
    spec: { terminationGracePeriodSeconds: 30, restartPolicy, containers },
  };
}

function work(p: Pod): PodWork {
  return { pod: p, updateType: "sync" };
}

function simContainers(runtime: ReturnType<typeof createSimRuntime>) {
  return [...runtime.containers.values()].sort((a, b) =>
    a.metadata.attempt - b.metadata.attempt
  );
}

Deno.test("syncPod() mounts a fresh 0666 message file and reports what the container wrote", async () => {
  await using t = await setup({
    containers: { app: { exitAfterMs: 1_000, exitCode: 3 } },
  });
  const p = pod([{ name: "app", image: "busybox:1.36" }]);
  await t.syncer.syncPod(work(p), t.signal);
  const [c] = simContainers(t.runtime);
  assert.equal(c!.mounts.length, 1);
  const { containerPath, hostPath } = c!.mounts[0]!;
  assert.equal(containerPath, "/dev/termination-log");
  assert.match(hostPath, /\/root\/pods\/u1\/containers\/app\/[0-9a-f]{8}$/);
  assert.equal((await Deno.stat(hostPath)).mode! & 0o777, 0o666);
  // the "process" writes its message, then exits 3
  await Deno.writeTextFile(hostPath, "bye\n");
  await t.clock.advance(1_000);
  assert.equal((await t.syncer.syncPod(work(p), t.signal)).terminal, true);
  const status = t.statusManager.getPodStatus("u1")!;
  assert.equal(status.phase, "Failed");
  const term = status.containerStatuses?.[0]?.state.terminated;
  assert.equal(term?.exitCode, 3);
  assert.equal(term?.message, "bye\n");

  await t.syncer.syncTerminatingPod(work(p), t.signal);
  await t.syncer.syncTerminatedPod(work(p), t.signal);
  // the exited container stays until container GC removes the pod's content, and so does the
  // file its status is read from
  assert.equal(await Deno.readTextFile(hostPath), "bye\n");
});

Deno.test("syncPod() keeps the old instance's message as lastState and gives a restart a new file", async () => {
  await using t = await setup({
    containers: { app: { exitAfterMs: 1_000, exitCode: 2 } },
  });
  const p = pod([{
    name: "app",
    image: "busybox:1.36",
    terminationMessagePath: "/tmp/why",
  }], "Always");
  await t.syncer.syncPod(work(p), t.signal);
  const first = simContainers(t.runtime)[0]!.mounts[0]!;
  assert.equal(first.containerPath, "/tmp/why");
  await Deno.writeTextFile(first.hostPath, "disk full");
  await t.clock.advance(1_000);
  await t.syncer.syncPod(work(p), t.signal);
  const [, second] = simContainers(t.runtime);
  assert.ok(second, "restarted");
  assert.notEqual(second.mounts[0]!.hostPath, first.hostPath);
  const status = t.statusManager.getPodStatus("u1")!.containerStatuses![0]!;
  assert.equal(status.restartCount, 1);
  assert.ok(status.state.running);
  assert.equal(status.lastState.terminated?.message, "disk full");
});

Deno.test("syncPod() uses the log tail for a failed FallbackToLogsOnError container with an empty file", async () => {
  await using t = await setup({
    logFiles: true,
    containers: {
      loud: {
        exitAfterMs: 500,
        exitCode: 1,
        logs: ["connecting", "fatal: no route"],
      },
      quiet: { exitAfterMs: 500, exitCode: 1, logs: ["ignored"] },
    },
  });
  const p = pod([
    {
      name: "loud",
      image: "busybox:1.36",
      terminationMessagePolicy: "FallbackToLogsOnError",
    },
    { name: "quiet", image: "busybox:1.36" },
  ]);
  await t.syncer.syncPod(work(p), t.signal);
  await t.clock.advance(500);
  await t.syncer.syncPod(work(p), t.signal);
  const statuses = t.statusManager.getPodStatus("u1")!.containerStatuses!;
  assert.equal(
    statuses[0]?.state.terminated?.message,
    "connecting\nfatal: no route\n",
  );
  assert.equal(statuses[1]?.state.terminated?.exitCode, 1);
  assert.equal(
    statuses[1]?.state.terminated?.message,
    undefined,
    "policy File never reads logs",
  );
});

Deno.test("syncPod() mounts nothing and reads no files without a root dir", async () => {
  const asked: string[] = [];
  await using t = await setup({
    containers: { app: { exitAfterMs: 500, exitCode: 1 } },
  }, {
    rootDir: false,
    deps: {
      messageReader: {
        readAtMost: (path) => {
          asked.push(path);
          return Promise.resolve(undefined);
        },
        readTailLines: (path) => {
          asked.push(path);
          return Promise.resolve(undefined);
        },
      },
    },
  });
  const p = pod([{ name: "app", image: "busybox:1.36" }]);
  await t.syncer.syncPod(work(p), t.signal);
  assert.deepEqual(simContainers(t.runtime)[0]!.mounts, []);
  await t.clock.advance(500);
  await t.syncer.syncPod(work(p), t.signal);
  const term = t.statusManager.getPodStatus("u1")!.containerStatuses![0]!.state
    .terminated;
  assert.equal(term?.exitCode, 1);
  assert.equal(term?.message, undefined);
  assert.deepEqual(asked, [], "policy File without a mount reads nothing");
});

Deno.test("syncPod() reports CreateContainerConfigError when the message file cannot be created", async () => {
  await using t = await setup({}, {
    deps: {
      messageWriter: {
        createFile: () => Promise.reject(new Error("read-only file system")),
        remove: () => Promise.resolve(),
        removeEmptyDir: () => Promise.resolve(),
      },
    },
  });
  const p = pod([{ name: "app", image: "busybox:1.36" }]);
  await t.syncer.syncPod(work(p), t.signal);
  assert.equal(t.runtime.containers.size, 0);
  const waiting = t.statusManager.getPodStatus("u1")!.containerStatuses![0]!
    .state.waiting;
  assert.equal(waiting?.reason, "CreateContainerConfigError");
  assert.match(waiting?.message ?? "", /read-only file system/);
});

Deno.test("markKubeletTermination() gives the stopped pod upstream's node shutdown status", async () => {
  await using t = await setup({ containers: { app: {} } });
  const p = pod([{ name: "app", image: "busybox:1.36" }], "Always");
  await t.syncer.syncPod(work(p), t.signal);
  assert.equal(t.statusManager.getPodStatus("u1")?.phase, "Running");
  t.syncer.markKubeletTermination("u1", {
    reason: "Terminated",
    message: "Pod was terminated in response to imminent node shutdown.",
    keepSucceeded: true,
  });
  const kill: PodWork = { pod: p, updateType: "kill", gracePeriodSeconds: 5 };
  await t.syncer.syncTerminatingPod(kill, t.signal);
  await t.syncer.syncTerminatedPod(kill, t.signal);
  const status = t.statusManager.getPodStatus("u1")!;
  assert.deepEqual(
    [status.phase, status.reason, status.message],
    [
      "Failed",
      "Terminated",
      "Pod was terminated in response to imminent node shutdown.",
    ],
  );
  const target = status.conditions?.find((c) => c.type === "DisruptionTarget");
  assert.deepEqual([target?.status, target?.reason, target?.message], [
    "True",
    "TerminationByKubelet",
    "Pod was terminated in response to imminent node shutdown.",
  ]);
});

Deno.test("markKubeletTermination(): a pod whose containers exit 0 on SIGTERM ends Succeeded without the reason, as upstream's status merge makes it", async () => {
  await using t = await setup({
    containers: { app: { sigtermExitCode: 0 } },
  });
  const p = pod([{ name: "app", image: "busybox:1.36" }], "Always");
  await t.syncer.syncPod(work(p), t.signal);
  t.syncer.markKubeletTermination("u1", {
    reason: "Terminated",
    message: "Pod was terminated in response to imminent node shutdown.",
    keepSucceeded: true,
  });
  await t.syncer.syncPod(work(p), t.signal);
  assert.equal(t.statusManager.getPodStatus("u1")?.phase, "Failed");
  const kill: PodWork = { pod: p, updateType: "kill", gracePeriodSeconds: 5 };
  await t.syncer.syncTerminatingPod(kill, t.signal);
  await t.syncer.syncTerminatedPod(kill, t.signal);
  const status = t.statusManager.getPodStatus("u1")!;
  assert.deepEqual([status.phase, status.reason, status.message], [
    "Succeeded",
    undefined,
    undefined,
  ]);
  const target = status.conditions?.find((c) => c.type === "DisruptionTarget");
  assert.equal(target?.status, "True");
});

Deno.test("markKubeletTermination() leaves a pod that already succeeded Succeeded", async () => {
  await using t = await setup({
    containers: { app: { exitAfterMs: 1_000, exitCode: 0 } },
  });
  const p = pod([{ name: "app", image: "busybox:1.36" }]);
  await t.syncer.syncPod(work(p), t.signal);
  await t.clock.advance(1_000);
  await t.syncer.syncPod(work(p), t.signal);
  t.syncer.markKubeletTermination("u1", {
    reason: "Terminated",
    message: "shutdown",
    keepSucceeded: true,
  });
  await t.syncer.syncTerminatingPod(work(p), t.signal);
  await t.syncer.syncTerminatedPod(work(p), t.signal);
  const status = t.statusManager.getPodStatus("u1")!;
  assert.deepEqual([status.phase, status.reason], ["Succeeded", "Terminated"]);
});

Deno.test("a pod not marked keeps its own status when stopped", async () => {
  await using t = await setup({ containers: { app: {} } });
  const p = pod([{ name: "app", image: "busybox:1.36" }], "Always");
  await t.syncer.syncPod(work(p), t.signal);
  t.syncer.markKubeletTermination("other-uid", {
    reason: "Terminated",
    message: "shutdown",
  });
  await t.syncer.syncTerminatingPod(work(p), t.signal);
  const status = t.statusManager.getPodStatus("u1")!;
  assert.equal(status.reason, undefined);
  assert.equal(
    status.conditions?.some((c) => c.type === "DisruptionTarget"),
    false,
  );
});

Deno.test("markKubeletTermination() ends with the pod: the same UID started again is not marked", async () => {
  await using t = await setup({ containers: { app: {} } });
  const p = pod([{ name: "app", image: "busybox:1.36" }], "Always");
  await t.syncer.syncPod(work(p), t.signal);
  t.syncer.markKubeletTermination("u1", {
    reason: "Terminated",
    message: "shutdown",
  });
  const kill: PodWork = { pod: p, updateType: "kill", gracePeriodSeconds: 1 };
  await t.syncer.syncTerminatingPod(kill, t.signal);
  await t.syncer.syncTerminatedPod(kill, t.signal);
  // a static pod whose manifest comes back unchanged keeps its UID
  t.statusManager.removePod("u1");
  await t.syncer.syncPod(work(p), t.signal);
  const status = t.statusManager.getPodStatus("u1")!;
  assert.equal(status.reason, undefined);
  assert.notEqual(status.phase, "Failed");
});

Deno.test("syncTerminatedPod() frees the pod's user namespace range", async () => {
  const released: string[] = [];
  const userNamespaces = {
    forPod: () => Promise.resolve({ mode: 2 }),
    release: (uid: string) => {
      released.push(uid);
      return Promise.resolve();
    },
    cleanupOrphans: () => Promise.resolve(),
  };
  await using t = await setup({
    containers: { app: { exitAfterMs: 1_000, exitCode: 0 } },
  }, { deps: { userNamespaces } });
  const p = pod([{ name: "app", image: "busybox:1.36" }]);
  await t.syncer.syncPod(work(p), t.signal);
  await t.syncer.syncTerminatingPod(work(p), t.signal);
  assert.deepEqual(released, []);
  await t.syncer.syncTerminatedPod(work(p), t.signal);
  assert.deepEqual(released, ["u1"]);
});
