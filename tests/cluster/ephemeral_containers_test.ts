/**
 * Ephemeral containers, on real containerd and the local control plane with an in-process
 * kubelet.ts (`startApiKubelet`): `kubectl debug --target` adds one to a running pod; the
 * kubelet starts it in the pod's sandbox, in the target's process namespace (its `ps` sees the
 * target's process), reports it in `status.ephemeralContainerStatuses`, serves its log, exec
 * and (`kubectl debug -i`) attach, and kills it with the pod.
 *
 * Node and namespace are `h8-eph-<random>`, removed at the end with everything created.
 */
import assert from "node:assert/strict";
import { POD_UID_LABEL } from "../../src/pod/mod.ts";
import {
  apiKubeletMissing as missing,
  createObject,
  pinnedPod,
  startApiKubelet,
} from "./_api_kubelet.ts";
import {
  cluster,
  CRI_ENDPOINT,
  CRI_IMAGE,
  getJson,
  kubectl,
  waitFor,
} from "./_cluster.ts";

// deno-lint-ignore no-console
if (missing) console.log(`skipping ephemeral_containers_test: ${missing}`);

interface ContainerStatusJson {
  name: string;
  ready: boolean;
  restartCount: number;
  containerID?: string;
  state: { running?: unknown; terminated?: { exitCode: number } };
}
interface PodJson {
  metadata: { uid: string };
  status?: {
    phase?: string;
    ephemeralContainerStatuses?: ContainerStatusJson[];
  };
}

Deno.test({
  name:
    "kubectl debug --target: the ephemeral container runs in the target's process namespace, is reported, logs, and dies with the pod",
  ignore: missing !== undefined,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const k = await startApiKubelet("h8-eph", { criEndpoint: CRI_ENDPOINT });
    const ns = k.node;
    try {
      await createObject(pinnedPod("target", ns, ["sleep", "7777"]));
      await waitFor("pod Running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "target");
        return p?.status?.phase === "Running" ? true : undefined;
      }, 60_000);

      await kubectl(
        "debug",
        "-n",
        ns,
        "target",
        `--image=${CRI_IMAGE}`,
        "--image-pull-policy=IfNotPresent",
        "--target=main",
        "--container=debugger",
        "--",
        "sh",
        "-c",
        "echo hello-from-debugger; ps; exec sleep 3600",
      );
      const running = await waitFor(
        "the ephemeral container running",
        async () => {
          const p = await getJson<PodJson>("pod", "-n", ns, "target");
          const s = p?.status?.ephemeralContainerStatuses?.find((c) =>
            c.name === "debugger"
          );
          return s?.state.running ? { pod: p!, status: s } : undefined;
        },
        60_000,
      );
      assert.equal(running.status.ready, false);
      assert.equal(running.status.restartCount, 0);
      assert.match(running.status.containerID ?? "", /^containerd:\/\//);

      const logs = await waitFor("the debugger's log", async () => {
        const text = await kubectl(
          "logs",
          "-n",
          ns,
          "target",
          "-c",
          "debugger",
        );
        return text.includes("hello-from-debugger") && text.includes("sleep")
          ? text
          : undefined;
      }, 30_000);
      // --target: the debugger's ps lists the target's process
      assert.match(logs, /sleep 7777/);
      // exec reaches it by name, as the NodeConformance tests do
      assert.equal(
        (await kubectl(
          "exec",
          "-n",
          ns,
          "target",
          "-c",
          "debugger",
          "--",
          "echo",
          "marco",
        )).trim(),
        "marco",
      );

      // kubectl debug -i: a second one with stdin, attached to at once
      const attached = await new Deno.Command(`${cluster.bin}/kubectl`, {
        args: [
          "--kubeconfig",
          cluster.kubeconfig,
          "debug",
          "-i",
          "-n",
          ns,
          "target",
          `--image=${CRI_IMAGE}`,
          "--image-pull-policy=IfNotPresent",
          "--container=shell",
          "--",
          "sh",
        ],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).spawn();
      // stdin stays open until the answer is back: the attach streams both ways
      const writer = attached.stdin.getWriter();
      const enc = new TextEncoder();
      await writer.write(enc.encode("echo attached-$((40+2))\n"));
      let seen = "";
      const dec = new TextDecoder();
      for await (const chunk of attached.stdout) {
        seen += dec.decode(chunk, { stream: true });
        if (seen.includes("attached-42")) break;
      }
      await writer.write(enc.encode("exit 0\n"));
      await writer.close();
      await attached.stderr.cancel();
      await attached.status;
      assert.match(seen, /attached-42/);

      // Deleting the pod kills the ephemeral container with the others.
      await kubectl("delete", "pod", "-n", ns, "target", "--wait=false");
      await waitFor("no running container of the pod", async () => {
        const { containers } = await k.runtime.listContainers({
          filter: {
            labelSelector: { [POD_UID_LABEL]: running.pod.metadata.uid },
          },
        });
        return containers.every((c) => c.state !== 1) ? true : undefined;
      }, 60_000);
    } finally {
      await k.stop();
    }
  },
});
