import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { ContainerState } from "../gen/api_pb.ts";
import { isCanceled, isNotFound, RuntimeError } from "../errors.ts";
import { createSimRuntime, type SimRuntime } from "./sim_runtime.ts";
import type { SimScenario } from "./scenario.ts";

const IMAGE = "busybox";

async function podWith(
  runtime: SimRuntime,
  name: string,
  command: string[] = [],
): Promise<{ sandboxId: string; containerId: string }> {
  const uid = crypto.randomUUID();
  const config = {
    metadata: { name: `pod-${uid.slice(0, 6)}`, uid, namespace: "default" },
    logDirectory: `/var/log/pods/default_p_${uid}`,
  };
  const { podSandboxId } = await runtime.runPodSandbox({ config });
  await runtime.pullImage({ image: { image: IMAGE } });
  const { containerId } = await runtime.createContainer({
    podSandboxId,
    config: {
      metadata: { name },
      image: { image: IMAGE },
      command,
      logPath: `${name}/0.log`,
    },
    sandboxConfig: config,
  });
  return { sandboxId: podSandboxId, containerId };
}

function setup(scenario: SimScenario = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  return { clock, runtime: createSimRuntime({ clock, scenario }) };
}

async function status(runtime: SimRuntime, containerId: string) {
  const { status } = await runtime.containerStatus({ containerId });
  assert.ok(status);
  return status;
}

Deno.test("createSimRuntime() exits a scripted container after exitAfterMs with its code", async () => {
  const { clock, runtime } = setup({
    containers: { app: { exitAfterMs: 5000, exitCode: 7 } },
  });
  const { containerId } = await podWith(runtime, "app");
  await runtime.startContainer({ containerId });
  const started = clock.now();
  await clock.advance(4999);
  assert.equal(
    (await status(runtime, containerId)).state,
    ContainerState.CONTAINER_RUNNING,
  );
  await clock.advance(1);
  const s = await status(runtime, containerId);
  assert.equal(s.state, ContainerState.CONTAINER_EXITED);
  assert.equal(s.exitCode, 7);
  assert.equal(s.reason, "Error");
  assert.equal(s.finishedAt, BigInt(started + 5000) * 1_000_000n);
  assert.equal(clock.pendingSleeps, 0); // no timers per container
});

Deno.test("createSimRuntime() reports OOMKilled containers", async () => {
  const { clock, runtime } = setup({
    containers: { hog: { exitAfterMs: 10, oomKilled: true } },
  });
  const { containerId } = await podWith(runtime, "hog");
  await runtime.startContainer({ containerId });
  await clock.advance(10);
  const s = await status(runtime, containerId);
  assert.equal(s.reason, "OOMKilled");
  assert.equal(s.exitCode, 137);
});

Deno.test("startContainer() waits startDelayMs on the clock", async () => {
  const { clock, runtime } = setup({
    containers: { slow: { startDelayMs: 3000 } },
  });
  const { containerId } = await podWith(runtime, "slow");
  let done = false;
  const start = runtime.startContainer({ containerId }).then(() => done = true);
  await clock.advance(2999);
  assert.equal(done, false);
  await clock.advance(1);
  await start;
  assert.equal(
    (await status(runtime, containerId)).state,
    ContainerState.CONTAINER_RUNNING,
  );
});

Deno.test("startContainer() with an unknown executable fails and marks StartError", async () => {
  const { runtime } = setup();
  const { containerId } = await podWith(runtime, "bad", ["/no/such/bin"]);
  await assert.rejects(
    runtime.startContainer({ containerId }),
    (e) =>
      e instanceof RuntimeError && /executable file not found/.test(e.message),
  );
  const s = await status(runtime, containerId);
  assert.equal(s.state, ContainerState.CONTAINER_EXITED);
  assert.equal(s.exitCode, 128);
  assert.equal(s.reason, "StartError");
});

Deno.test("stopContainer() kills a SIGTERM-ignoring container only after the timeout", async () => {
  const { clock, runtime } = setup({
    containers: { stubborn: { ignoreSigterm: true } },
  });
  const { containerId } = await podWith(runtime, "stubborn");
  await runtime.startContainer({ containerId });
  let stopped = false;
  const stop = runtime.stopContainer({ containerId, timeout: 30n }).then(() =>
    stopped = true
  );
  await clock.advance(29_000);
  assert.equal(stopped, false);
  assert.equal(
    (await status(runtime, containerId)).state,
    ContainerState.CONTAINER_RUNNING,
  );
  await clock.advance(1000);
  await stop;
  const s = await status(runtime, containerId);
  assert.equal(s.exitCode, 137);
});

Deno.test("stopContainer() ends a cooperative container at once with 143", async () => {
  const { runtime } = setup();
  const { containerId } = await podWith(runtime, "nice", ["sleep", "3600"]);
  await runtime.startContainer({ containerId });
  await runtime.stopContainer({ containerId, timeout: 30n });
  const s = await status(runtime, containerId);
  assert.equal(s.exitCode, 143);
  assert.equal(s.reason, "Error");
});

Deno.test("stopContainer() rejects with Canceled when its signal aborts", async () => {
  const { runtime } = setup({
    containers: { stubborn: { ignoreSigterm: true } },
  });
  const { containerId } = await podWith(runtime, "stubborn");
  await runtime.startContainer({ containerId });
  const controller = new AbortController();
  const stop = runtime.stopContainer({ containerId, timeout: 30n }, {
    signal: controller.signal,
  });
  controller.abort();
  await assert.rejects(stop, isCanceled);
});

Deno.test("pullImage() fails K times, then succeeds, after a slow pull", async () => {
  const { clock, runtime } = setup({
    images: {
      "docker.io/library/flaky:1": { pullFailures: 2, pullDelayMs: 500 },
    },
  });
  for (let i = 0; i < 2; i++) {
    const pull = runtime.pullImage({ image: { image: "flaky:1" } });
    const check = assert.rejects(
      pull,
      (e) => e instanceof RuntimeError && e.code === 2,
    );
    await clock.advance(500);
    await check;
  }
  const pull = runtime.pullImage({ image: { image: "flaky:1" } });
  await clock.advance(500);
  const { imageRef } = await pull;
  const listed = await runtime.imageStatus({
    image: { image: "docker.io/library/flaky:1" },
  });
  assert.equal(listed.image?.id, imageRef);
  assert.deepEqual(listed.image?.repoTags, ["docker.io/library/flaky:1"]);
});

Deno.test("pullImage() needs the scenario's registry credentials", async () => {
  const { runtime } = setup({
    registryAuth: { "reg.example:5000": { username: "u", password: "p" } },
  });
  const image = { image: "reg.example:5000/app:1" };
  await assert.rejects(
    runtime.pullImage({ image }),
    (e) => e instanceof RuntimeError && /401 Unauthorized/.test(e.message),
  );
  await runtime.pullImage({ image, auth: { auth: btoa("u:p") } });
  assert.ok((await runtime.imageStatus({ image })).image);
});

Deno.test("injectError() fails the next call of that method only; calls logs every call", async () => {
  const { runtime } = setup();
  runtime.injectError("version", new RuntimeError(14, "boom"));
  await assert.rejects(runtime.version({}), /boom/);
  assert.equal((await runtime.version({})).runtimeName, "kubelet.ts-sim");
  assert.deepEqual(runtime.calls, ["version", "version"]);
});

Deno.test("readLog() returns CRI-format lines written by the container", async () => {
  const { runtime } = setup({ containers: { talker: { logs: ["ready"] } } });
  const { containerId } = await podWith(runtime, "talker", [
    "sh",
    "-c",
    "echo hi; echo oops >&2; sleep 100",
  ]);
  await runtime.startContainer({ containerId });
  const lines = runtime.readLog(containerId).trim().split("\n");
  assert.equal(lines.length, 3);
  assert.match(lines[0] ?? "", /^2026-01-01T00:00:00\.000000000Z stdout F hi$/);
  assert.match(lines[1] ?? "", / stderr F oops$/);
  assert.match(lines[2] ?? "", / stdout F ready$/);
  const s = await status(runtime, containerId);
  assert.match(s.logPath, /^\/var\/log\/pods\/default_p_.*\/talker\/0\.log$/);
});

Deno.test("execSync() uses scripted results and honours timeouts on the clock", async () => {
  const { clock, runtime } = setup({
    containers: {
      app: {
        exec: [{ command: ["check"], stdout: "fine", exitCode: 0 }, {
          command: ["slow"],
          delayMs: 5000,
        }],
      },
    },
  });
  const { containerId } = await podWith(runtime, "app");
  await runtime.startContainer({ containerId });
  const ok = await runtime.execSync({ containerId, cmd: ["check"] });
  assert.equal(new TextDecoder().decode(ok.stdout), "fine");
  const slow = runtime.execSync({ containerId, cmd: ["slow"], timeout: 2n });
  const check = assert.rejects(
    slow,
    (e) => e instanceof RuntimeError && e.code === 4,
  );
  await clock.advance(2000);
  await check;
});

Deno.test("removePodSandbox() force-removes a READY sandbox with its containers", async () => {
  const { runtime } = setup();
  const { sandboxId, containerId } = await podWith(runtime, "app");
  await runtime.startContainer({ containerId });
  const verbose = await runtime.containerStatus({ containerId, verbose: true });
  assert.equal(JSON.parse(verbose.info["info"] ?? "{}").id, containerId);
  await runtime.removePodSandbox({ podSandboxId: sandboxId });
  await assert.rejects(runtime.containerStatus({ containerId }), isNotFound);
  assert.equal(runtime.sandboxes.size, 0);
  assert.equal(runtime.containers.size, 0);
});

Deno.test("status() reflects the scenario's readiness and version() names the sim", async () => {
  const { runtime } = setup({ networkReady: false });
  const { status } = await runtime.status({});
  const net = status?.conditions.find((c) => c.type === "NetworkReady");
  assert.equal(net?.status, false);
  assert.equal(net?.reason, "NetworkPluginNotReady");
  const v = await runtime.version({ version: "0.1.0" });
  assert.deepEqual([v.version, v.runtimeApiVersion], ["0.1.0", "v1"]);
});

Deno.test("createSimRuntime() runs 1000 pods with no timers while idle", async () => {
  const { clock, runtime } = setup();
  await runtime.pullImage({ image: { image: IMAGE } });
  for (let i = 0; i < 1000; i++) {
    const { podSandboxId } = await runtime.runPodSandbox({
      config: {
        metadata: { name: `p${i}`, uid: `u${i}`, namespace: "default" },
      },
    });
    const { containerId } = await runtime.createContainer({
      podSandboxId,
      config: {
        metadata: { name: "c" },
        image: { image: IMAGE },
        command: ["sleep", String(i + 1)],
      },
    });
    await runtime.startContainer({ containerId });
  }
  assert.equal(clock.pendingSleeps, 0);
  await clock.advance(500_000);
  const { containers } = await runtime.listContainers({
    filter: { state: { state: ContainerState.CONTAINER_EXITED } },
  });
  assert.equal(containers.length, 500);
  const { items } = await runtime.listPodSandbox({
    filter: { labelSelector: {} },
  });
  assert.equal(items.length, 1000);
});

Deno.test("startContainer() writes CRI log files only when the scenario asks", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const runtime = createSimRuntime({ scenario: { logFiles: true } });
    const config = {
      metadata: { name: "p", uid: "u1", namespace: "default" },
      logDirectory: `${dir}/default_p_u1`,
    };
    const { podSandboxId } = await runtime.runPodSandbox({ config });
    await runtime.pullImage({ image: { image: IMAGE } });
    const { containerId } = await runtime.createContainer({
      podSandboxId,
      config: {
        metadata: { name: "app" },
        image: { image: IMAGE },
        command: ["sh", "-c", "echo hello"],
        logPath: "app/0.log",
      },
      sandboxConfig: config,
    });
    await runtime.startContainer({ containerId });
    const text = await Deno.readTextFile(`${dir}/default_p_u1/app/0.log`);
    assert.match(text, /^\S+ stdout F hello\n$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runPodSandbox() reuses a name whose owner was dropped from the maps", async () => {
  const { runtime } = setup();
  const config = { metadata: { name: "p", uid: "u", namespace: "default" } };
  await runtime.runPodSandbox({ config });
  await assert.rejects(runtime.runPodSandbox({ config }), /is reserved for/);
  runtime.sandboxes.clear(); // as if the runtime lost its state
  const { podSandboxId } = await runtime.runPodSandbox({ config });
  assert.ok(runtime.sandboxes.has(podSandboxId));
});

Deno.test("containersByImage applies to any spelling of the image", async () => {
  const { clock, runtime } = setup({
    containersByImage: {
      "docker.io/library/busybox:latest": { exitAfterMs: 1, exitCode: 9 },
    },
  });
  const { containerId } = await podWith(runtime, "any");
  await runtime.startContainer({ containerId });
  await clock.advance(1);
  assert.equal((await status(runtime, containerId)).exitCode, 9);
});
