/**
 * End-to-end static pods on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see
 * scripts/cri_env.sh); skipped without it. The runtime is shared with other tests, so these
 * kubelets never garbage-collect orphans and every pod name carries a random node name.
 */
import assert from "node:assert/strict";
import { systemClock } from "../../src/clock/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createKubelet, type Kubelet } from "../../src/kubelet.ts";
import { createPodSyncer } from "../../src/pod/mod.ts";
import {
  ContainerState,
  createCriRuntime,
  type CriRuntime,
} from "../../src/runtime/mod.ts";
import { createPodStatusManager } from "../../src/status/mod.ts";

const endpoint = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";
const IMAGE = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";

interface E2e extends AsyncDisposable {
  node: string;
  runtime: CriRuntime;
  kubelet: Kubelet;
  write(file: string, text: string): Promise<void>;
  remove(file: string): Promise<void>;
  restartKubelet(): Promise<void>;
  containers(
    pod: string,
  ): Promise<
    { id: string; state: ContainerState; createdAt: number; uid: string }[]
  >;
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function manifest(name: string, command: string[], grace = 2): string {
  return JSON.stringify({
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

async function startE2e(): Promise<E2e> {
  const node = `e2e-${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: "kts-pod-e2e-" });
  await Deno.mkdir(`${dir}/manifests`);
  const runtime = createCriRuntime({ endpoint, timeoutMs: 60_000 });
  const logger = new CaptureLogger();
  const build = () => {
    const syncer = createPodSyncer(
      {
        runtime,
        images: runtime,
        clock: systemClock,
        logger,
        statusManager: createPodStatusManager(),
      },
      {
        podLogsDir: `${dir}/logs`,
        serializeImagePulls: true,
        nodeName: node,
        runtimeRequestTimeoutMs: 60_000,
      },
    );
    const k = createKubelet({ runtime, syncer, clock: systemClock, logger }, {
      nodeName: node,
      staticPodPath: `${dir}/manifests`,
      fileCheckFrequencyMs: 1000,
      runtimeRequestTimeoutMs: 60_000,
    });
    k.start();
    return k;
  };
  let kubelet = build();
  const e: E2e = {
    node,
    runtime,
    get kubelet() {
      return kubelet;
    },
    write: (f, t) => Deno.writeTextFile(`${dir}/manifests/${f}`, t),
    remove: (f) => Deno.remove(`${dir}/manifests/${f}`),
    async restartKubelet() {
      await kubelet.stop();
      kubelet = build();
    },
    async containers(pod) {
      const { containers } = await runtime.listContainers({
        filter: {
          labelSelector: { "io.kubernetes.pod.name": `${pod}-${node}` },
        },
      });
      return containers
        .map((c) => ({
          id: c.id,
          state: c.state,
          createdAt: Number(c.createdAt / 1_000_000n),
          uid: c.labels["io.kubernetes.pod.uid"] ?? "",
        }))
        .sort((a, b) => a.createdAt - b.createdAt);
    },
    async [Symbol.asyncDispose]() {
      await kubelet.stop();
      // Sweep everything this test created (its pod names end with the random node name).
      const { items } = await runtime.listPodSandbox({});
      for (
        const s of items.filter((s) => s.metadata?.name.endsWith(`-${node}`))
      ) {
        await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
        await runtime.removePodSandbox({ podSandboxId: s.id }).catch(() => {});
      }
      await runtime.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
  return e;
}

const running = <T extends { state: ContainerState }>(cs: T[]): T[] =>
  cs.filter((c) => c.state === ContainerState.CONTAINER_RUNNING);

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
