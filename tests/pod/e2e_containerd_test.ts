/**
 * End-to-end static pods on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh); skipped without it. The runtime is shared with other tests, so these
 * kubelets never garbage-collect orphans and every pod name carries a random node name.
 */
import assert from "node:assert/strict";
import {
  endpoint,
  IMAGE,
  running,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

function manifest(name: string, command: string[], grace = 2): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: grace,
      containers: [{
        name: "app",
        image: IMAGE,
        imagePullPolicy: "IfNotPresent",
        command,
      }],
    },
  });
}

Deno.test({
  name:
    "containerd: a static httpd pod runs, is recreated on edit and stopped within grace on delete",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write("web.yaml", manifest("web", ["httpd", "-f", "-p", "8080"]));
    const [first] = await waitFor("httpd running", async () => {
      const r = running(await e.containers("web"));
      return r.length === 1 ? r : undefined;
    });
    await e.write("web.yaml", manifest("web", ["httpd", "-f", "-p", "8081"]));
    const [second] = await waitFor("httpd recreated", async () => {
      const r = running(await e.containers("web")).filter((c) =>
        c.id !== first!.id
      );
      return r.length === 1 && running(await e.containers("web")).length === 1
        ? r
        : undefined;
    });
    assert.notEqual(second!.uid, first!.uid);
    // A process that ignores SIGTERM is killed when its 3 s grace period ends.
    await e.write(
      "stubborn.yaml",
      manifest("stubborn", [
        "sh",
        "-c",
        "trap '' TERM; while true; do sleep 1; done",
      ], 3),
    );
    await waitFor(
      "stubborn running",
      async () =>
        running(await e.containers("stubborn")).length ? true : undefined,
    );
    const deletedAt = Date.now();
    await e.remove("stubborn.yaml");
    await e.remove("web.yaml");
    await waitFor(
      "pods stopped",
      async () =>
        running([
            ...await e.containers("stubborn"),
            ...await e.containers("web"),
          ]).length === 0
          ? true
          : undefined,
    );
    const took = Date.now() - deletedAt;
    assert.ok(took >= 2000 && took <= 3000 + 4000, `stopped after ${took} ms`);
  },
});

Deno.test({
  name:
    "containerd: a crash-looping container restarts with growing back-off gaps",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write("crash.yaml", manifest("crash", ["sh", "-c", "exit 1"]));
    const created = await waitFor("three starts", async () => {
      const cs = await e.containers("crash");
      return cs.length >= 3 ? cs.map((c) => c.createdAt) : undefined;
    }, 90_000);
    const gaps = created.slice(1).map((t, i) => t - created[i]!);
    assert.ok(gaps[1]! > gaps[0]!, `gaps ${gaps}`);
    assert.ok(gaps[1]! >= 10_000, `gaps ${gaps}`);
    await e.remove("crash.yaml");
  },
});

Deno.test({
  name: "containerd: a restarted kubelet keeps the running container IDs",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write("keep.yaml", manifest("keep", ["sleep", "3600"]));
    const before = await waitFor("running", async () => {
      const r = running(await e.containers("keep"));
      return r.length === 1 ? r.map((c) => c.id) : undefined;
    });
    await e.restartKubelet();
    await e.kubelet.refreshSources();
    await e.kubelet.whenIdle();
    await e.kubelet.relist();
    await e.kubelet.whenIdle();
    const after = await e.containers("keep");
    assert.deepEqual(after.map((c) => c.id), before);
    assert.equal(running(after).length, 1);
    await e.remove("keep.yaml");
  },
});
