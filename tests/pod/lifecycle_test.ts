/**
 * Lifecycle fidelity on the simulated runtime: finished pods keep their content and are not run
 * again by a restarted kubelet, container GC bounds dead instances and removes the content of
 * deleted pods, orphans do not hold up the sync loop.
 */
import assert from "node:assert/strict";
import { podYaml, startHarness } from "./_harness.ts";

const JOBS = {
  "ok.yaml": podYaml("ok", {
    restartPolicy: "Never",
    containers: [{ name: "job", command: ["sh", "-c", "exit 0"] }],
  }),
  "bad.yaml": podYaml("bad", {
    restartPolicy: "Never",
    containers: [{ name: "job", command: ["sh", "-c", "exit 1"] }],
  }),
  "retry.yaml": podYaml("retry", {
    restartPolicy: "OnFailure",
    containers: [{ name: "job", command: ["sh", "-c", "exit 0"] }],
  }),
};

Deno.test("a restarted kubelet starts nothing for finished Never and OnFailure pods", async () => {
  await using h = await startHarness({
    manifests: JOBS,
    scenario: { logFiles: true },
  });
  await h.settle();
  await h.tick(5_000);
  assert.equal(h.phase("ok"), "Succeeded");
  assert.equal(h.phase("bad"), "Failed");
  assert.equal(h.phase("retry"), "Succeeded");
  const before = new Map<string, string[]>();
  for (const name of ["ok", "bad", "retry"]) {
    const cs = await h.containers(name);
    assert.equal(cs.length, 1, `${name}: ${cs.length} containers`);
    assert.equal(cs[0]!.state, "exited", `${name} keeps its exited container`);
    before.set(name, cs.map((c) => c.id));
  }
  assert.equal(h.runtime.sandboxes.size, 3, "stopped sandboxes stay");
  const creates = () =>
    h.runtime.calls.filter((m) => m === "createContainer").length;
  const created = creates();

  await h.restartKubelet();
  await h.tick(70_000); // past a container GC pass
  assert.equal(creates(), created, "no CreateContainer after the restart");
  for (const name of ["ok", "bad", "retry"]) {
    assert.deepEqual((await h.containers(name)).map((c) => c.id), [
      ...before.get(name)!,
    ]);
  }
  assert.equal(h.phase("ok"), "Succeeded");
  assert.equal(h.phase("bad"), "Failed");
  assert.equal(h.phase("retry"), "Succeeded");
  const logs = [...Deno.readDirSync(`${h.dir}/logs`)].map((e) => e.name);
  assert.equal(logs.length, 3, "log directories stay while the pods exist");
});

Deno.test("container GC removes a deleted pod's containers, sandbox and log directory", async () => {
  await using h = await startHarness({
    manifests: { "ok.yaml": JOBS["ok.yaml"] },
    scenario: { logFiles: true },
  });
  await h.settle();
  await h.tick(3_000);
  assert.equal((await h.containers("ok")).length, 1);
  await h.remove("ok.yaml");
  await h.settle();
  await h.tick(65_000);
  assert.deepEqual(await h.containers("ok"), []);
  assert.equal(h.runtime.sandboxes.size, 0);
  assert.deepEqual([...Deno.readDirSync(`${h.dir}/logs`)], []);
});

Deno.test("container GC keeps at most maximum-dead-containers-per-container instances of a crash loop", async () => {
  await using h = await startHarness({
    manifests: {
      "crash.yaml": podYaml("crash", {
        containers: [{ name: "app", command: ["sh", "-c", "exit 1"] }],
      }),
    },
    scenario: { logFiles: true },
  });
  await h.settle();
  let most = 0;
  for (let s = 0; s < 130; s += 5) {
    await h.tick(5_000);
    const dead = (await h.containers("crash")).filter((c) =>
      c.state === "exited"
    );
    if (s >= 60) most = Math.max(most, dead.length);
  }
  // Restarts at about 0, 10, 30, 70 s; a GC pass each minute keeps the newest dead one, so at
  // most one more can die before the next pass.
  assert.ok(most <= 2, `${most} dead instances kept`);
  const [pod] = await Deno.readDir(`${h.dir}/logs`)[Symbol.asyncIterator]()
    .next().then((r) => [r.value?.name]);
  const files = [...Deno.readDirSync(`${h.dir}/logs/${pod}/app`)].map((e) =>
    e.name
  );
  assert.ok(files.length <= 2, `log files left: ${files}`);
});

Deno.test("orphans found after a restart are stopped by pod workers while a new pod starts", async () => {
  const orphans: Record<string, string> = {};
  for (let i = 0; i < 10; i++) {
    orphans[`o${i}.yaml`] = podYaml(`o${i}`, {
      grace: 30,
      containers: [{ name: "stubborn", command: ["sleep", "3600"] }],
    });
  }
  await using h = await startHarness({
    manifests: orphans,
    scenario: { containers: { stubborn: { ignoreSigterm: true } } },
  });
  await h.settle();
  await h.kubelet.stop();
  for (const file of Object.keys(orphans)) await h.remove(file);
  await h.write(
    "new.yaml",
    podYaml("new", {
      containers: [{ name: "app", command: ["sleep", "3600"] }],
    }),
  );
  await h.restartKubelet();
  assert.equal((await h.containers("new"))[0]?.state, "running");
  await h.tick(2_000); // housekeeping finds the orphans; each needs 2 s to stop
  const stillRunning = async () => {
    let n = 0;
    for (let i = 0; i < 10; i++) {
      n += (await h.containers(`o${i}`)).filter((c) => c.state === "running")
        .length;
    }
    return n;
  };
  assert.ok(await stillRunning() > 0, "the orphans are still stopping");
  // A manifest added now is started by the sync loop at once, not after the orphans.
  await h.write(
    "late.yaml",
    podYaml("late", {
      containers: [{ name: "app", command: ["sleep", "3600"] }],
    }),
  );
  await h.kubelet.refreshSources();
  await h.tick(1_000);
  assert.equal((await h.containers("late"))[0]?.state, "running");
  await h.tick(3_000);
  assert.equal(await stillRunning(), 0, "every orphan stopped in parallel");
});
