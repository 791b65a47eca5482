/**
 * Lifecycle fidelity on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh;
 * skipped without it): finished pods survive a kubelet restart without running again,
 * container GC bounds a crash loop, a slow preStop hook does not overrun the grace period, and
 * orphans found after a restart do not hold up a new pod. Orphan clean-up and container GC only
 * see this test's node (the runtime is shared with other test files).
 */
import assert from "node:assert/strict";
import { ContainerState } from "../../src/runtime/mod.ts";
import {
  type E2e,
  endpoint,
  IMAGE,
  running,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

interface Spec {
  name: string;
  command: string[];
  lifecycle?: unknown;
}

function manifest(
  name: string,
  containers: Spec[],
  options: { restartPolicy?: string; grace?: number } = {},
): unknown {
  return {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: options.grace ?? 2,
      ...(options.restartPolicy
        ? { restartPolicy: options.restartPolicy }
        : {}),
      containers: containers.map((c) => ({
        ...c,
        image: IMAGE,
        imagePullPolicy: "IfNotPresent",
      })),
    },
  };
}

/** Waits until the current kubelet's worker for the pod has finished. */
async function finished(e: E2e, pod: string): Promise<void> {
  await waitFor(`pod ${pod} finished`, async () => {
    const uid = (await e.containers(pod))[0]?.uid;
    return uid && e.kubelet.workers.phaseOf(uid) === "finished"
      ? true
      : undefined;
  }, 90_000);
}

const JOBS = ["ok", "bad", "retry"];

Deno.test({
  name:
    "containerd: finished Never and OnFailure pods keep their exited containers and are not run again by a restarted kubelet",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({ rootDir: true, cleanup: {} });
    await e.write(
      "ok.yaml",
      manifest("ok", [{ name: "job", command: ["sh", "-c", "echo done"] }], {
        restartPolicy: "Never",
      }),
    );
    await e.write(
      "bad.yaml",
      manifest("bad", [{ name: "job", command: ["sh", "-c", "exit 1"] }], {
        restartPolicy: "Never",
      }),
    );
    // fails once (leaves a mark in the sandbox's /dev/shm), then succeeds
    await e.write(
      "retry.yaml",
      manifest("retry", [{
        name: "job",
        command: [
          "sh",
          "-c",
          "if [ -e /dev/shm/ran ]; then exit 0; fi; touch /dev/shm/ran; exit 1",
        ],
      }], { restartPolicy: "OnFailure" }),
    );
    for (const pod of JOBS) await finished(e, pod);
    const phase = (pod: string) => e.statuses(pod).at(-1)?.phase;
    assert.equal(phase("ok"), "Succeeded");
    assert.equal(phase("bad"), "Failed");
    assert.equal(phase("retry"), "Succeeded");
    const ids = new Map<string, string[]>();
    for (const pod of JOBS) {
      const cs = await e.containers(pod);
      assert.ok(cs.length > 0, `${pod} keeps its containers`);
      assert.ok(
        cs.every((c) => c.state === ContainerState.CONTAINER_EXITED),
        `${pod}: ${cs.map((c) => c.state)}`,
      );
      ids.set(pod, cs.map((c) => c.id));
    }
    const creates = () =>
      e.created.filter((n) => JOBS.some((p) => n === `${p}-${e.node}`))
        .length;
    const before = creates();
    assert.equal(before, 4, "ok, bad and two runs of retry");

    for (let restart = 1; restart <= 2; restart++) {
      const seen = new Map(JOBS.map((p) => [p, e.statuses(p).length]));
      await e.restartKubelet();
      // the new kubelet reports each pod finished again from what the runtime kept
      await waitFor(
        "statuses after the restart",
        () =>
          JOBS.every((p) => e.statuses(p).length > seen.get(p)!)
            ? true
            : undefined,
      );
      for (const pod of JOBS) await finished(e, pod);
      await new Promise((r) => setTimeout(r, 3_000)); // several housekeeping passes
      assert.equal(
        creates(),
        before,
        `no CreateContainer after restart ${restart}`,
      );
      assert.equal(phase("ok"), "Succeeded");
      assert.equal(phase("bad"), "Failed");
      assert.equal(phase("retry"), "Succeeded");
      for (const pod of JOBS) {
        assert.deepEqual(
          (await e.containers(pod)).map((c) => c.id),
          ids.get(pod),
        );
      }
    }
    // the exited container's log stays readable
    const okDir = [...Deno.readDirSync(e.logsDir)].find((d) =>
      d.name.startsWith(`default_ok-${e.node}_`)
    );
    assert.ok(okDir, "log directory kept");
    assert.match(
      await Deno.readTextFile(`${e.logsDir}/${okDir.name}/job/0.log`),
      /stdout F done/,
    );
    for (const pod of JOBS) await e.remove(`${pod}.yaml`);
  },
});

Deno.test({
  name:
    "containerd: container GC keeps at most the configured dead instances of a crash-looping container",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({
      cleanup: {
        gcPeriodMs: 2_000,
        gcPolicy: { minAgeMs: 0, maxPerPodContainer: 1, maxContainers: -1 },
      },
    });
    await e.write(
      "crash.yaml",
      manifest("crash", [{ name: "app", command: ["sh", "-c", "exit 1"] }]),
    );
    const ids = new Set<string>();
    let mostDead = 0;
    const deadline = Date.now() + 45_000;
    while (Date.now() < deadline) {
      const cs = await e.containers("crash");
      for (const c of cs) ids.add(c.id);
      const dead = cs.filter((c) =>
        c.state !== ContainerState.CONTAINER_RUNNING
      );
      mostDead = Math.max(mostDead, dead.length);
      await new Promise((r) => setTimeout(r, 250));
    }
    // back-off restarts at about 0, 10, 30 s: at least 3 instances ran
    assert.ok(ids.size >= 3, `${ids.size} instances ran`);
    // one kept per pass, plus one that may die between passes
    assert.ok(mostDead <= 2, `${mostDead} dead instances at once`);
    const logDir = [...Deno.readDirSync(e.logsDir)][0]!.name;
    const files = [...Deno.readDirSync(`${e.logsDir}/${logDir}/app`)];
    assert.ok(files.length <= 2, `log files: ${files.map((f) => f.name)}`);
    await e.remove("crash.yaml");
  },
});

Deno.test({
  name:
    "containerd: a preStop hook that sleeps does not hold a 3 s grace period pod beyond 3-5 s",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write(
      "slow.yaml",
      manifest("slow", [{
        name: "app",
        command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"],
        // the shell keeps a child that holds the exec's output open: ExecSync returns only
        // when the container stops (or after 10 s)
        lifecycle: {
          preStop: { exec: { command: ["sh", "-c", "sleep 10; echo late"] } },
        },
      }], { grace: 3 }),
    );
    const [app] = await waitFor("app running", async () => {
      const r = running(await e.containers("slow"));
      return r.length ? r : undefined;
    });
    await waitFor(
      "the kubelet saw it running",
      () =>
        e.statuses("slow").at(-1)?.containerStatuses?.[0]?.state.running
          ? true
          : undefined,
    );
    const removed = Date.now();
    await e.remove("slow.yaml");
    await waitFor("app stopped", async () => {
      const c = (await e.containers("slow")).find((x) => x.id === app!.id);
      return c && c.state !== ContainerState.CONTAINER_RUNNING
        ? true
        : undefined;
    }, 30_000);
    const took = Date.now() - removed;
    // deno-lint-ignore no-console
    console.log(`preStop + grace 3: stopped after ${took} ms`);
    assert.ok(took >= 2_900, `stopped after ${took} ms: the hook got its time`);
    assert.ok(took <= 5_500, `stopped after ${took} ms`);
  },
});

Deno.test({
  name:
    "containerd: 10 orphans found after a restart do not delay a new pod's start",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({ cleanup: {} });
    const sleeper = (name: string) =>
      manifest(name, [{ name: "app", command: ["sleep", "3600"] }]);
    // sleep as PID 1 ignores SIGTERM: each orphan takes its whole 2 s to stop
    for (let i = 0; i < 10; i++) await e.write(`o${i}.yaml`, sleeper(`o${i}`));
    const startTime = async (pod: string) => {
      const t0 = Date.now();
      await e.write(`${pod}.yaml`, sleeper(pod));
      await waitFor(
        `${pod} running`,
        async () => running(await e.containers(pod)).length ? true : undefined,
      );
      return Date.now() - t0;
    };
    await waitFor("orphans-to-be running", async () => {
      for (let i = 0; i < 10; i++) {
        if (!running(await e.containers(`o${i}`)).length) return undefined;
      }
      return true;
    }, 120_000);
    const baseline = await startTime("base");
    const orphanSandboxes = new Set<string>();
    for (let i = 0; i < 10; i++) {
      for (const id of await e.sandboxes(`o${i}`)) orphanSandboxes.add(id);
    }

    await e.kubelet.stop();
    for (let i = 0; i < 10; i++) await e.remove(`o${i}.yaml`);
    await e.restartKubelet();
    await waitFor(
      "housekeeping found the orphans",
      () =>
        e.logger.records.some((r) => /orphan/i.test(r.msg)) ? true : undefined,
      30_000,
    );
    const late = await startTime("late");
    // deno-lint-ignore no-console
    console.log(
      `new pod start: ${late} ms with 10 orphans stopping, ${baseline} ms idle`,
    );
    await waitFor("orphans stopped", async () => {
      for (let i = 0; i < 10; i++) {
        if (running(await e.containers(`o${i}`)).length) return undefined;
      }
      return true;
    }, 30_000);
    // An orphan's sandbox is stopped only once its container has used up its grace period
    // (sleep ignores SIGTERM). The new pod's sandbox is asked for before any of theirs is
    // stopped: its start waited for none of them (an order of the kubelet's own calls,
    // whatever the runtime's speed; a wall-clock bound failed on a loaded machine).
    const calls = e.sandboxCalls;
    const lateRun = calls.findIndex((c) =>
      "run" in c && c.run === `late-${e.node}`
    );
    const firstOrphanStop = calls.findIndex((c) =>
      "stop" in c && orphanSandboxes.has(c.stop)
    );
    assert.ok(lateRun >= 0, "the new pod's sandbox was asked for");
    assert.ok(firstOrphanStop >= 0, "the orphans' sandboxes were stopped");
    assert.ok(
      lateRun < firstOrphanStop,
      `the new pod's RunPodSandbox (call ${lateRun}) came after an orphan's StopPodSandbox (call ${firstOrphanStop})`,
    );
  },
});
