/**
 * A preStop hook on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh;
 * skipped without it): removing the static pod runs the hook, which writes into a hostPath
 * volume the kubelet created (DirectoryOrCreate), before the container stops.
 */
import assert from "node:assert/strict";
import { ContainerState } from "../../src/runtime/mod.ts";
import {
  endpoint,
  running,
  shContainer,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

Deno.test({
  name:
    "containerd: a preStop hook writes to a hostPath file before the container stops",
  ignore: !endpoint,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "kts-prestop-" });
    const hostDir = `${tmp}/made-by-kubelet`;
    try {
      await using e2e = await startE2e({ rootDir: true });
      await e2e.write("hook.json", {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "hook" },
        spec: {
          terminationGracePeriodSeconds: 20,
          volumes: [{
            name: "host",
            hostPath: { path: hostDir, type: "DirectoryOrCreate" },
          }],
          containers: [shContainer(
            "app",
            "trap 'exit 0' TERM; while true; do sleep 0.1; done",
            {
              volumeMounts: [{ name: "host", mountPath: "/host" }],
              lifecycle: {
                preStop: {
                  exec: {
                    command: [
                      "sh",
                      "-c",
                      "echo stopped-$(date +%s) > /host/prestop",
                    ],
                  },
                },
              },
            },
          )],
        },
      });
      const app = await waitFor("the app container running", async () => {
        const cs = running(await e2e.containers("hook"));
        return cs.length === 1 ? cs[0] : undefined;
      });
      assert.ok((await Deno.stat(hostDir)).isDirectory);
      await assert.rejects(Deno.stat(`${hostDir}/prestop`));
      await e2e.remove("hook.json");
      const finishedAtMs = await waitFor(
        "the app container exited",
        async () => {
          const { status } = await e2e.runtime.containerStatus({
            containerId: app.id,
          });
          return status?.state === ContainerState.CONTAINER_EXITED
            ? Number(status.finishedAt / 1_000_000n)
            : undefined;
        },
        30_000,
      );
      const text = await Deno.readTextFile(`${hostDir}/prestop`);
      const seconds = Number(/^stopped-(\d+)\n$/.exec(text)?.[1]);
      assert.ok(seconds > 0, `unexpected hook output ${JSON.stringify(text)}`);
      const { mtime } = await Deno.stat(`${hostDir}/prestop`);
      assert.ok(mtime, "the hook's file has no mtime");
      // the hook ran (and finished writing) while the container was still running
      assert.ok(
        mtime.getTime() <= finishedAtMs,
        `written at ${mtime.toISOString()}, container finished at ${
          new Date(finishedAtMs).toISOString()
        }`,
      );
      assert.ok(seconds * 1000 <= finishedAtMs);
      assert.ok(mtime.getTime() >= app.createdAt);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});
