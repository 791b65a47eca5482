/**
 * End-to-end restarts and init containers on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh); skipped without it: restart policies, init container order, and a
 * kubelet that survives a containerd restart.
 *
 * The shared containerd serves other test files in parallel, so these kubelets never
 * garbage-collect orphans, every pod name carries a random node name and each test removes
 * only its own sandboxes. The restart test restarts a private runtime-only containerd (a
 * second `scripts/cri_env.sh` instance) so the shared one is never interrupted.
 */
import assert from "node:assert/strict";
import type { PodStatus } from "../../src/pod/types.ts";
import { ContainerState } from "../../src/runtime/mod.ts";
import {
  criEnv,
  endpoint,
  IMAGE,
  running,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";
import { claimSubnet } from "../_subnets.ts";

const criRoot = Deno.env.get("KUBELET_TS_CRI_ROOT") ?? "";
const isRoot = Deno.build.os === "linux" && Deno.uid() === 0;

interface ContainerSpec {
  name: string;
  command: string[];
}

function podManifest(
  name: string,
  containers: ContainerSpec[],
  options: {
    restartPolicy?: string;
    initContainers?: ContainerSpec[];
    hostNetwork?: boolean;
  } = {},
): unknown {
  const container = (c: ContainerSpec) => ({
    ...c,
    image: IMAGE,
    imagePullPolicy: "IfNotPresent",
  });
  return {
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 2,
      ...(options.restartPolicy
        ? { restartPolicy: options.restartPolicy }
        : {}),
      ...(options.hostNetwork ? { hostNetwork: true } : {}),
      ...(options.initContainers
        ? { initContainers: options.initContainers.map(container) }
        : {}),
      containers: containers.map(container),
    },
  };
}

/** The app container's status in a pod status, if any. */
function appStatus(status: PodStatus | undefined, name = "app") {
  return status?.containerStatuses?.find((c) => c.name === name);
}

/** Distinct runtime container IDs ever reported for container `name`. */
function containerIds(statuses: PodStatus[], name: string): Set<string> {
  const ids = new Set<string>();
  for (const s of statuses) {
    for (
      const c of [
        ...(s.containerStatuses ?? []),
        ...(s.initContainerStatuses ?? []),
      ]
    ) {
      if (c.name !== name) continue;
      if (c.containerID) ids.add(c.containerID);
      const t = c.state.terminated?.containerID;
      if (t) ids.add(t);
    }
  }
  return ids;
}

Deno.test({
  name:
    "containerd: restartPolicy Never keeps a failed container down (Failed); OnFailure restarts exit 1 but not exit 0 (Succeeded)",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write(
      "never.yaml",
      podManifest("never", [{ name: "app", command: ["sh", "-c", "exit 1"] }], {
        restartPolicy: "Never",
      }),
    );
    // The pod's containers share the sandbox's /dev/shm: the first run leaves a mark and
    // fails, the second run sees the mark and succeeds.
    await e.write(
      "onfailure.yaml",
      podManifest("onfailure", [{
        name: "app",
        command: [
          "sh",
          "-c",
          "if [ -e /dev/shm/ran ]; then exit 0; fi; touch /dev/shm/ran; exit 1",
        ],
      }], { restartPolicy: "OnFailure" }),
    );

    const failed = await waitFor(
      "pod never Failed",
      () => e.statuses("never").find((s) => s.phase === "Failed"),
    );
    const neverApp = appStatus(failed);
    assert.equal(neverApp?.state.terminated?.exitCode, 1);
    assert.equal(neverApp?.restartCount, 0);

    const succeeded = await waitFor(
      "pod onfailure Succeeded",
      () => e.statuses("onfailure").find((s) => s.phase === "Succeeded"),
      90_000,
    );
    const onFailureApp = appStatus(succeeded);
    assert.equal(onFailureApp?.state.terminated?.exitCode, 0);
    assert.equal(onFailureApp?.lastState?.terminated?.exitCode, 1);
    assert.equal(onFailureApp?.restartCount, 1);

    // A terminal pod keeps its exited containers (container GC removes them only once the pod
    // is deleted): wait until both workers finished, then nothing was started after the
    // terminal exit (a restart would have shown up as another container ID).
    await waitFor("terminal pods finished", async () => {
      const uids = [
        (await e.containers("never"))[0]?.uid,
        (await e.containers("onfailure"))[0]?.uid,
      ];
      return uids.every((u) => u && e.kubelet.workers.phaseOf(u) === "finished")
        ? true
        : undefined;
    });
    for (const pod of ["never", "onfailure"]) {
      const left = await e.containers(pod);
      assert.ok(left.length > 0, `${pod} keeps its containers`);
      assert.ok(running(left).length === 0, `${pod} runs nothing`);
    }
    assert.equal(containerIds(e.statuses("never"), "app").size, 1);
    assert.equal(containerIds(e.statuses("onfailure"), "app").size, 2);
    for (const pod of ["never", "onfailure"]) {
      const phases = e.statuses(pod).map((s) => s.phase);
      const terminalAt = phases.findIndex((p) =>
        p === "Failed" || p === "Succeeded"
      );
      assert.ok(
        phases.slice(terminalAt).every((p) => p === phases[terminalAt]),
        `${pod} phases ${phases}`,
      );
    }
    await e.remove("never.yaml");
    await e.remove("onfailure.yaml");
  },
});

Deno.test({
  name:
    "containerd: init containers run one by one, in order, before the app container",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    // init2 fails unless init1 already wrote its line (they share the sandbox's /dev/shm);
    // the app prints what both wrote into its log.
    await e.write(
      "init.yaml",
      podManifest("init", [{
        name: "app",
        command: ["sh", "-c", "cat /dev/shm/order; exec sleep 3600"],
      }], {
        initContainers: [
          { name: "init1", command: ["sh", "-c", "echo one >>/dev/shm/order"] },
          {
            name: "init2",
            command: [
              "sh",
              "-c",
              "grep -qx one /dev/shm/order && echo two >>/dev/shm/order",
            ],
          },
        ],
      }),
    );
    const all = await waitFor("app running", async () => {
      const cs = await e.containers("init");
      return cs.some((c) =>
          c.name === "app" && c.state === ContainerState.CONTAINER_RUNNING
        )
        ? cs
        : undefined;
    });
    assert.deepEqual(all.map((c) => c.name), ["init1", "init2", "app"]);
    const statuses = [];
    for (const c of all) {
      const { status } = await e.runtime.containerStatus({ containerId: c.id });
      assert.ok(status, `status of ${c.name}`);
      statuses.push(status);
    }
    const [init1, init2, app] = statuses as [
      (typeof statuses)[number],
      (typeof statuses)[number],
      (typeof statuses)[number],
    ];
    assert.equal(init1.state, ContainerState.CONTAINER_EXITED);
    assert.equal(init1.exitCode, 0);
    assert.equal(init2.state, ContainerState.CONTAINER_EXITED);
    assert.equal(init2.exitCode, 0);
    assert.ok(
      init1.finishedAt <= init2.createdAt,
      "init2 created after init1 ended",
    );
    assert.ok(
      init1.finishedAt <= init2.startedAt,
      "init2 started after init1 ended",
    );
    assert.ok(
      init2.finishedAt <= app.createdAt,
      "app created after init2 ended",
    );
    assert.ok(
      init2.finishedAt <= app.startedAt,
      "app started after init2 ended",
    );

    const log = await waitFor("app log", async () => {
      const text = await Deno.readTextFile(app.logPath).catch(() => "");
      return text.includes("two") ? text : undefined;
    });
    const lines = log.trim().split("\n").map((l) =>
      l.split(" ").slice(3).join(" ")
    );
    assert.deepEqual(lines, ["one", "two"]);

    const status = await waitFor("init statuses", () => {
      const s = e.statuses("init").at(-1);
      return s?.initContainerStatuses?.length === 2 &&
          s.phase === "Running"
        ? s
        : undefined;
    });
    assert.deepEqual(
      status.initContainerStatuses?.map((c) => [
        c.name,
        c.state.terminated?.exitCode,
        c.restartCount,
      ]),
      [["init1", 0, 0], ["init2", 0, 0]],
    );
    await e.remove("init.yaml");
    await waitFor(
      "pod stopped",
      async () => running(await e.containers("init")).length ? undefined : true,
    );
  },
});

Deno.test({
  name:
    "containerd: after a containerd restart the kubelet reconnects, keeps the container and starts new pods",
  ignore: !endpoint || !criRoot || !isRoot,
  async fn() {
    const id = crypto.randomUUID().slice(0, 6);
    // released after the finally below has taken the instance down
    await using claim = await claimSubnet();
    const env = {
      KTS_CRI_ROOT: `${criRoot}-restart-${id}`,
      KTS_CRI_RUNTIME_ONLY: "1",
      KTS_CRI_BRIDGE: `ktsr${id}`,
      KTS_CRI_SUBNET: claim.subnet,
    };
    try {
      const lines = await criEnv("up", env);
      const privateEndpoint = /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(lines)
        ?.[1];
      assert.ok(privateEndpoint, `no endpoint in: ${lines}`);
      await using e = await startE2e({ endpoint: privateEndpoint });
      // Host network: the private instance needs no pod network of its own.
      const pod = (name: string) =>
        podManifest(name, [{ name: "app", command: ["sleep", "3600"] }], {
          hostNetwork: true,
        });
      await e.write("keep.yaml", pod("keep"));
      const before = await waitFor("keep running", async () => {
        const r = running(await e.containers("keep"));
        return r.length === 1 ? r[0]!.id : undefined;
      });

      // containerd stays down for 3 s: longer than the client's connect retries, so the
      // kubelet sees failed calls and must recover from them.
      const errorsBefore = e.logger.records.filter((r) =>
        r.severity === "error"
      ).length;
      let restarted = false;
      const restart = criEnv("restart", {
        ...env,
        KTS_CRI_RESTART_PAUSE: "3",
      }).finally(() => restarted = true);
      const sawOutage = await waitFor(
        "a failed PLEG relist or the restart",
        () => {
          const errors = e.logger.records.filter((r) => r.severity === "error");
          if (errors.length > errorsBefore) return true;
          return restarted ? false : undefined;
        },
      );
      // Added while containerd is (most likely) down: its first sync fails and is retried.
      await e.write("after.yaml", pod("after"));
      await restart;
      assert.ok(sawOutage, "the kubelet never noticed containerd was down");

      await waitFor("pod added during the outage running", async () => {
        const r = running(await e.containers("after"));
        return r.length === 1 ? true : undefined;
      });
      await e.kubelet.relist();
      await e.kubelet.refreshSources();
      await e.kubelet.whenIdle();
      const keep = await e.containers("keep");
      assert.deepEqual(keep.map((c) => [c.id, c.state]), [
        [before, ContainerState.CONTAINER_RUNNING],
      ]);
      await e.remove("keep.yaml");
      await e.remove("after.yaml");
      await waitFor("pods stopped", async () => {
        const r = running([
          ...await e.containers("keep"),
          ...await e.containers("after"),
        ]);
        return r.length === 0 ? true : undefined;
      });
    } finally {
      await criEnv("down", env);
    }
  },
});
