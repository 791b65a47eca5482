import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import {
  type Container,
  ContainerSchema,
  ContainerState,
  create,
  ListContainersResponseSchema,
  ListPodSandboxResponseSchema,
  type PodSandbox,
  PodSandboxSchema,
  PodSandboxState,
  RuntimeUnavailableError,
} from "../../runtime/mod.ts";
import {
  computePlegEvents,
  Pleg,
  type PlegRecord,
  type PodLifecycleEvent,
} from "./pleg.ts";

function records(
  entries: [string, string, PlegRecord["state"]][],
): Map<string, PlegRecord> {
  return new Map(entries.map(([id, podUid, state]) => [id, { podUid, state }]));
}

Deno.test("computePlegEvents() maps state changes to lifecycle events", () => {
  const before = records([
    ["c1", "p", "running"],
    ["c2", "p", "running"],
    ["c3", "p", "exited"],
    ["c4", "q", "running"],
    ["c5", "q", "exited"],
  ]);
  const after = records([["c1", "p", "running"], ["c2", "p", "exited"], [
    "c4",
    "q",
    "unknown",
  ], ["c6", "q", "running"]]);
  assert.deepEqual(computePlegEvents(before, after), [
    { type: "ContainerDied", podUid: "p", id: "c2" },
    { type: "ContainerChanged", podUid: "q", id: "c4" },
    { type: "ContainerStarted", podUid: "q", id: "c6" },
    { type: "ContainerRemoved", podUid: "p", id: "c3" },
    { type: "ContainerRemoved", podUid: "q", id: "c5" },
  ]);
  const gone = computePlegEvents(records([["c1", "p", "running"]]), new Map());
  assert.deepEqual(gone.map((e) => e.type), [
    "ContainerDied",
    "ContainerRemoved",
  ]);
});

class ListingRuntime {
  sandboxes: PodSandbox[] = [];
  containers: Container[] = [];
  failures = 0;
  listPodSandbox() {
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new RuntimeUnavailableError("connection refused"));
    }
    return Promise.resolve(
      create(ListPodSandboxResponseSchema, { items: this.sandboxes }),
    );
  }
  listContainers() {
    return Promise.resolve(
      create(ListContainersResponseSchema, { containers: this.containers }),
    );
  }
}

function container(id: string, uid: string, state: ContainerState): Container {
  return create(ContainerSchema, {
    id,
    state,
    labels: { "io.kubernetes.pod.uid": uid },
  });
}

Deno.test("Pleg.relist() reports sandbox and container changes labelled with the pod UID", async () => {
  const runtime = new ListingRuntime();
  const seen: PodLifecycleEvent[][] = [];
  const pleg = new Pleg({
    runtime,
    clock: new FakeClock(),
    logger: new CaptureLogger(),
  }, { onEvents: (e) => seen.push(e) });
  runtime.sandboxes = [
    create(PodSandboxSchema, {
      id: "s1",
      state: PodSandboxState.SANDBOX_READY,
      metadata: { uid: "p1" },
    }),
  ];
  runtime.containers = [
    container("c1", "p1", ContainerState.CONTAINER_RUNNING),
    create(ContainerSchema, { id: "unlabelled" }),
  ];
  assert.deepEqual(await pleg.relist(), [
    { type: "ContainerStarted", podUid: "p1", id: "s1" },
    { type: "ContainerStarted", podUid: "p1", id: "c1" },
  ]);
  assert.deepEqual(await pleg.relist(), []);
  runtime.containers = [container("c1", "p1", ContainerState.CONTAINER_EXITED)];
  assert.deepEqual(await pleg.relist(), [{
    type: "ContainerDied",
    podUid: "p1",
    id: "c1",
  }]);
  assert.equal(seen.length, 2);
});

Deno.test("Pleg.healthy() needs a relist within the threshold and survives runtime errors", async () => {
  const runtime = new ListingRuntime();
  const clock = new FakeClock();
  const logger = new CaptureLogger();
  const pleg = new Pleg({ runtime, clock, logger }, { thresholdMs: 180_000 });
  assert.deepEqual(pleg.healthy(), {
    ok: false,
    message: "pleg has yet to be successful",
  });
  runtime.containers = [
    container("c1", "p1", ContainerState.CONTAINER_RUNNING),
  ];
  await pleg.relist();
  assert.deepEqual(pleg.healthy(), { ok: true });
  runtime.failures = 2;
  await clock.advance(181_000);
  assert.deepEqual(await pleg.relist(), []);
  assert.deepEqual(await pleg.relist(), []);
  assert.deepEqual(pleg.healthy(), {
    ok: false,
    message: "pleg was last seen active 3m1s ago; threshold is 3m0s",
  });
  assert.equal(logger.records.filter((r) => r.severity === "error").length, 1);
  // The runtime comes back with the container gone (e.g. a restarted runtime).
  runtime.containers = [];
  assert.deepEqual((await pleg.relist()).map((e) => e.type), [
    "ContainerDied",
    "ContainerRemoved",
  ]);
  assert.deepEqual(pleg.healthy(), { ok: true });
});

Deno.test("Pleg.run() relists every period until aborted", async () => {
  const runtime = new ListingRuntime();
  const clock = new FakeClock();
  let relists = 0;
  const counting = {
    listPodSandbox: () => {
      relists++;
      return runtime.listPodSandbox();
    },
    listContainers: () => runtime.listContainers(),
  };
  const pleg = new Pleg({
    runtime: counting,
    clock,
    logger: new CaptureLogger(),
  }, { relistPeriodMs: 1000 });
  const ac = new AbortController();
  const running = pleg.run(ac.signal);
  await clock.advance(0);
  assert.equal(relists, 1);
  await clock.advance(3000);
  assert.equal(relists, 4);
  ac.abort();
  await running;
});
