/**
 * Sidecar termination order on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh; skipped without it), as upstream's v1.34 kubelet stops them
 * (`killContainersWithSyncResult` with its termination ordering, the e2e_node "Containers
 * Lifecycle" sidecar termination tests): removing the pod sends SIGTERM to the regular
 * container first, then to the sidecars from the last declared to the first, each only
 * after the one before it has exited. Each container notes its SIGTERM in a hostPath file,
 * then takes a second to exit, so a sidecar signalled too early is seen whatever the load.
 */
import assert from "node:assert/strict";
import { running, shContainer, startE2e, waitFor } from "./_containerd_e2e.ts";
import { endpoint } from "./_containerd_e2e.ts";

/** Notes `name` and the uptime at SIGTERM in /host/order, exits a second later. */
function noting(name: string): string {
  return `trap 'read up rest < /proc/uptime; echo "${name} $up" >> /host/order; sleep 1; exit 0' TERM; ` +
    "while true; do sleep 0.1; done";
}

Deno.test({
  name:
    "containerd: a pod's regular container stops first, then its sidecars last-declared first",
  ignore: !endpoint,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "kts-sidecar-order-" });
    try {
      await using e2e = await startE2e({ rootDir: true });
      const mount = { volumeMounts: [{ name: "host", mountPath: "/host" }] };
      await e2e.write("sidecars.json", {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "sidecars" },
        spec: {
          terminationGracePeriodSeconds: 30,
          volumes: [{ name: "host", hostPath: { path: tmp } }],
          initContainers: [
            shContainer("s1", noting("s1"), {
              ...mount,
              restartPolicy: "Always",
            }),
            shContainer("s2", noting("s2"), {
              ...mount,
              restartPolicy: "Always",
            }),
          ],
          containers: [shContainer("app", noting("app"), mount)],
        },
      });
      await waitFor(
        "the three containers running",
        async () =>
          running(await e2e.containers("sidecars")).length === 3 || undefined,
        120_000,
      );
      await e2e.remove("sidecars.json");
      const lines = await waitFor("three SIGTERMs noted", async () => {
        const text = await Deno.readTextFile(`${tmp}/order`).catch(() => "");
        const l = text.trim().split("\n").filter((x) => x !== "");
        return l.length === 3 ? l : undefined;
      }, 120_000);
      // deno-lint-ignore no-console
      console.log(`SIGTERM at (uptime s):\n${lines.join("\n")}`);
      const order = lines.map((l) => l.split(" ")[0]);
      assert.deepEqual(order, ["app", "s2", "s1"]);
      const at = lines.map((l) => Number(l.split(" ")[1]));
      // each waited for the previous one to exit (which takes it a second after SIGTERM)
      assert.ok(
        at[1]! - at[0]! >= 1,
        `s2 signalled ${at[1]! - at[0]!} s after app`,
      );
      assert.ok(
        at[2]! - at[1]! >= 1,
        `s1 signalled ${at[2]! - at[1]!} s after s2`,
      );
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});
