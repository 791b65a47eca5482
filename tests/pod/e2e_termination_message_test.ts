/**
 * Termination messages end to end on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh); skipped without it: the message file the kubelet bind-mounts, and the
 * log-tail fallback of `FallbackToLogsOnError`.
 */
import assert from "node:assert/strict";
import { endpoint, IMAGE, startE2e, waitFor } from "./_containerd_e2e.ts";

Deno.test({
  name:
    "containerd: termination messages come from /dev/termination-log, or the log tail on error",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({
      rootDir: true,
      // the files go with the pod's content, which container GC removes once it is deleted
      cleanup: { gcPeriodMs: 1_000 },
    });
    await e.write("bye.yaml", {
      metadata: { name: "bye" },
      spec: {
        restartPolicy: "Never",
        terminationGracePeriodSeconds: 1,
        containers: [{
          name: "writer",
          image: IMAGE,
          imagePullPolicy: "IfNotPresent",
          command: ["sh", "-c", "echo bye > /dev/termination-log; exit 3"],
        }, {
          name: "talker",
          image: IMAGE,
          imagePullPolicy: "IfNotPresent",
          terminationMessagePolicy: "FallbackToLogsOnError",
          command: ["sh", "-c", "echo starting; echo giving up; exit 1"],
        }],
      },
    });
    const statuses = await waitFor("both containers terminated", () => {
      const last = e.statuses("bye").at(-1);
      const cs = last?.containerStatuses ?? [];
      return cs.length === 2 && cs.every((c) => c.state.terminated)
        ? cs
        : undefined;
    });
    const writer = statuses.find((c) => c.name === "writer")!;
    const talker = statuses.find((c) => c.name === "talker")!;
    assert.equal(writer.state.terminated?.exitCode, 3);
    assert.equal(writer.state.terminated?.message, "bye\n");
    assert.equal(talker.state.terminated?.exitCode, 1);
    assert.equal(talker.state.terminated?.message, "starting\ngiving up\n");

    const uid = (await e.containers("bye"))[0]?.uid;
    assert.ok(uid);
    const podDir = `${e.rootDir}/pods/${uid}`;
    const names: string[] = [];
    for await (const d of Deno.readDir(`${podDir}/containers`)) {
      names.push(d.name);
    }
    assert.deepEqual(names.sort(), ["talker", "writer"]);
    await e.remove("bye.yaml");
    await waitFor("the pod's message files removed", async () => {
      try {
        await Deno.stat(podDir);
        return undefined;
      } catch {
        return true;
      }
    });
  },
});
