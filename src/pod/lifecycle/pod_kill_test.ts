import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import type { CallOptions, RuntimeService } from "../../runtime/mod.ts";
import { containerGracePeriod, killContainer } from "./pod_kill.ts";
import { makeContainerView } from "../testing.ts";
import type { Container, Pod } from "../types.ts";

const container: Container = {
  name: "app",
  image: "nginx",
  livenessProbe: {
    exec: { command: ["true"] },
    terminationGracePeriodSeconds: 7,
  },
};

function pod(meta: Partial<Pod["metadata"]> = {}, grace?: number): Pod {
  return {
    metadata: { name: "web", namespace: "default", uid: "u1", ...meta },
    spec: {
      containers: [container],
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
    },
  };
}

const cases: {
  name: string;
  pod: Pod | undefined;
  options: Parameters<typeof containerGracePeriod>[2];
  want: number;
}[] = [
  { name: "defaults to 30s", pod: pod(), options: {}, want: 30 },
  { name: "uses the spec", pod: pod({}, 12), options: {}, want: 12 },
  {
    name: "deletion grace wins over the spec",
    pod: pod({ deletionGracePeriodSeconds: 4 }, 12),
    options: {},
    want: 4,
  },
  {
    name: "probe grace wins for liveness kills",
    pod: pod({}, 12),
    options: { reason: "LivenessProbe" },
    want: 7,
  },
  {
    name: "deletion grace beats the probe grace",
    pod: pod({ deletionGracePeriodSeconds: 3 }, 12),
    options: { reason: "LivenessProbe" },
    want: 3,
  },
  {
    name: "pod-level override wins",
    pod: pod({}, 12),
    options: { gracePeriodOverride: 1 },
    want: 1,
  },
  {
    name: "recorded grace when the spec is gone",
    pod: undefined,
    options: { recorded: 45 },
    want: 45,
  },
];

for (const c of cases) {
  Deno.test(`containerGracePeriod() ${c.name}`, () => {
    assert.equal(containerGracePeriod(c.pod, container, c.options), c.want);
  });
}

/** A runtime that only records `stopContainer` calls (all `killContainer` uses here). */
function stopRecorder() {
  const stops: { timeout: bigint; timeoutMs: number | undefined }[] = [];
  const runtime = {
    stopContainer(
      request: Parameters<RuntimeService["stopContainer"]>[0],
      options?: CallOptions,
    ) {
      stops.push({
        timeout: BigInt(request.timeout ?? 0),
        timeoutMs: options?.timeoutMs,
      });
      return Promise.resolve({});
    },
  } as unknown as RuntimeService;
  return { runtime, stops };
}

Deno.test("killContainer() never gives the runtime less than 2 s, even with a 0 or 1 s override", async () => {
  // upstream killContainer: the override replaces the grace period, then the 2 s floor applies
  for (const [override, want] of [[0, 2n], [1, 2n], [5, 5n]] as const) {
    const { runtime, stops } = stopRecorder();
    const clock = new FakeClock();
    const deps = {
      runtime,
      clock,
      logger: new CaptureLogger(),
      runtimeRequestTimeoutMs: 60_000,
    };
    await killContainer(deps, {
      pod: pod({}, 30),
      view: makeContainerView(container),
    }, { gracePeriodOverride: override });
    assert.deepEqual(stops, [{
      timeout: want,
      timeoutMs: Number(want) * 1000 + 60_000,
    }], `override ${override}`);
  }
});

Deno.test("killContainer() gives 2 s after a preStop hook that used up the grace period", async () => {
  const hooked: Container = {
    ...container,
    lifecycle: { preStop: { sleep: { seconds: 60 } } },
  };
  const withHook = (grace: number): Pod => ({
    ...pod({}, grace),
    spec: { containers: [hooked], terminationGracePeriodSeconds: grace },
  });
  const run = async (grace: number) => {
    const { runtime, stops } = stopRecorder();
    const clock = new FakeClock();
    const deps = {
      runtime,
      clock,
      logger: new CaptureLogger(),
      runtimeRequestTimeoutMs: 0,
    };
    const done = killContainer(deps, {
      pod: withHook(grace),
      view: makeContainerView(hooked),
    });
    // the sleep hook is cut off at the grace period
    await clock.advance(grace * 1000);
    await done;
    return stops.map((s) => s.timeout);
  };
  assert.deepEqual(await run(10), [2n]);
  assert.deepEqual(await run(1), [2n]);
});

Deno.test("killContainer() waits at most the grace period for a slow exec preStop hook", async () => {
  // upstream executePreStopHook: the hook gets the grace period, then the container is stopped
  // with what is left (2 s at least) while the hook may still run
  const clock = new FakeClock();
  const stopsAt: { at: number; timeout: bigint }[] = [];
  let hookDone = false;
  const runtime = {
    async execSync() {
      await clock.sleep(10_000); // `sleep 10` in the container
      hookDone = true;
      return {
        exitCode: 0,
        stdout: new Uint8Array(),
        stderr: new Uint8Array(),
      };
    },
    stopContainer(request: Parameters<RuntimeService["stopContainer"]>[0]) {
      stopsAt.push({ at: clock.now(), timeout: BigInt(request.timeout ?? 0) });
      return Promise.resolve({});
    },
  } as unknown as RuntimeService;
  const hooked: Container = {
    ...container,
    lifecycle: { preStop: { exec: { command: ["sleep", "10"] } } },
  };
  const start = clock.now();
  const done = killContainer({
    runtime,
    clock,
    logger: new CaptureLogger(),
    runtimeRequestTimeoutMs: 0,
  }, {
    pod: {
      ...pod({}, 3),
      spec: { containers: [hooked], terminationGracePeriodSeconds: 3 },
    },
    view: makeContainerView(hooked),
  });
  await clock.advance(3_000);
  await new Promise((r) => setTimeout(r, 0));
  const stoppedAtGrace = [...stopsAt];
  assert.equal(hookDone, false, "the hook was not waited for");
  await clock.advance(7_000); // let the abandoned hook finish
  assert.equal(hookDone, true);
  assert.equal((await done).reason, undefined);
  assert.deepEqual(stoppedAtGrace, [{ at: start + 3_000, timeout: 2n }]);
});

Deno.test("killContainer() finds an ephemeral container's spec for its Killing event", async () => {
  const { runtime } = stopRecorder();
  const recorded: string[] = [];
  const debug: Container = { name: "debug", image: "busybox" };
  const p = pod({}, 5);
  p.spec.ephemeralContainers = [debug];
  await killContainer({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
    runtimeRequestTimeoutMs: 60_000,
    events: {
      event: (_ref, type, reason, message) =>
        recorded.push(`${type} ${reason}: ${message}`),
    },
  }, { pod: p, view: makeContainerView(debug) });
  assert.deepEqual(recorded, ["Normal Killing: Stopping container debug"]);
});
