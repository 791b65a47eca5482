/**
 * CRI client against a real containerd. Skipped unless
 * `KUBELET_TS_CRI_ENDPOINT` is set (`.ci/run` / `scripts/cri_env.sh up`).
 * Names carry a random suffix so parallel suites on the same containerd do
 * not collide.
 */
import assert from "node:assert/strict";
import {
  connectRuntime,
  ContainerState,
  create,
  createCriRuntime,
  type CriRuntime,
  DeadlineExceededError,
  GrpcCode,
  isNotFound,
  NamespaceMode,
  NotFoundError,
  type PodSandboxConfig,
  PodSandboxConfigSchema,
  RuntimeError,
} from "../../src/runtime/mod.ts";

const endpoint = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";
const localImage = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";
const registryImage = Deno.env.get("KUBELET_TS_CRI_REGISTRY_IMAGE");
const ignore = !endpoint;

function suffix(): string {
  return crypto.randomUUID().slice(0, 8);
}

async function withRuntime(fn: (runtime: CriRuntime) => Promise<void>) {
  await using runtime = createCriRuntime({ endpoint, timeoutMs: 60_000 });
  await fn(runtime);
}

/**
 * Other suites share this containerd and may remove images: use the
 * pre-imported image when present, else pull a copy from the local registry.
 */
async function busybox(runtime: CriRuntime): Promise<string> {
  const local = await runtime.imageStatus({ image: { image: localImage } });
  if (local.image || !registryImage) return localImage;
  const pulled = await runtime.pullImage({ image: { image: registryImage } });
  assert.match(pulled.imageRef, /^sha256:[0-9a-f]{64}$/);
  return registryImage;
}

function sandboxConfig(name: string, logDirectory: string): PodSandboxConfig {
  const uid = crypto.randomUUID();
  return create(PodSandboxConfigSchema, {
    metadata: { name, uid, namespace: "kts-cri-client", attempt: 0 },
    hostname: "", // host network: the node's hostname
    logDirectory,
    labels: {
      "io.kubernetes.pod.name": name,
      "io.kubernetes.pod.namespace": "kts-cri-client",
      "io.kubernetes.pod.uid": uid,
    },
    linux: {
      securityContext: {
        namespaceOptions: {
          network: NamespaceMode.NODE,
          pid: NamespaceMode.CONTAINER,
          ipc: NamespaceMode.POD,
        },
      },
    },
  });
}

Deno.test({
  name: "containerd: handshake reports CRI v1",
  ignore,
  async fn() {
    const connected = await connectRuntime({ endpoint });
    await using _runtime = connected.runtime;
    assert.equal(connected.version.version, "0.1.0");
    assert.equal(connected.version.runtimeApiVersion, "v1");
    assert.equal(connected.version.runtimeName, "containerd");
    assert.equal(connected.readiness.runtimeReady, true);
  },
});

Deno.test({
  name: "containerd: unknown IDs give NotFound; stop/remove are idempotent",
  ignore,
  async fn() {
    await withRuntime(async (runtime) => {
      const id = "kts-missing-" + suffix();
      await assert.rejects(
        runtime.podSandboxStatus({ podSandboxId: id }),
        NotFoundError,
      );
      await assert.rejects(
        runtime.containerStatus({ containerId: id }),
        (e: unknown) => isNotFound(e),
      );
      // Remove* of an unknown ID succeeds. Stop* succeeds on newer containerd
      // but is NotFound on 1.6.20 (measured); kubelet treats both as "gone".
      await runtime.removeContainer({ containerId: id });
      await runtime.removePodSandbox({ podSandboxId: id });
      for (
        const stop of [
          () => runtime.stopContainer({ containerId: id, timeout: 0n }),
          () => runtime.stopPodSandbox({ podSandboxId: id }),
        ]
      ) {
        const outcome = await stop().then(() => "ok", (e: unknown) => e);
        assert.ok(outcome === "ok" || isNotFound(outcome), String(outcome));
      }
    });
  },
});

Deno.test({
  name:
    "containerd: ImageStatus of an absent image is empty, present one has an id",
  ignore,
  async fn() {
    await withRuntime(async (runtime) => {
      const absent = await runtime.imageStatus({
        image: { image: `kts.local/absent-${suffix()}:none` },
      });
      assert.equal(absent.image, undefined);
      const image = await busybox(runtime);
      const present = await runtime.imageStatus({ image: { image } });
      assert.match(present.image?.id ?? "", /^sha256:[0-9a-f]{64}$/);
      const fs = await runtime.imageFsInfo({});
      assert.ok(fs.imageFilesystems.length >= 1);
    });
  },
});

Deno.test({
  name: "containerd: RPCs newer than the runtime are Unimplemented",
  ignore,
  async fn() {
    await withRuntime(async (runtime) => {
      const version = await runtime.version({ version: "0.1.0" });
      // containerd 1.6 predates ListMetricDescriptors; newer ones implement it
      if (!version.runtimeVersion.startsWith("1.6")) return;
      const events = async () => {
        for await (const _ of runtime.getContainerEvents({})) break;
      };
      await assert.rejects(
        events(),
        (e: unknown) =>
          e instanceof RuntimeError && e.code === GrpcCode.Unimplemented,
      );
      await assert.rejects(
        runtime.listMetricDescriptors({}),
        (e: unknown) =>
          e instanceof RuntimeError && e.code === GrpcCode.Unimplemented,
      );
    });
  },
});

Deno.test({
  name: "containerd: sandbox + container lifecycle, ExecSync, deadline",
  ignore,
  async fn() {
    const logDirectory = await Deno.makeTempDir({ prefix: "kts-cri-client-" });
    await withRuntime(async (runtime) => {
      const image = await busybox(runtime);
      const name = "kts-client-" + suffix();
      const config = sandboxConfig(name, logDirectory);
      const { podSandboxId } = await runtime.runPodSandbox({ config });
      try {
        await Deno.mkdir(`${logDirectory}/main`, { recursive: true });
        const { containerId } = await runtime.createContainer({
          podSandboxId,
          sandboxConfig: config,
          config: {
            metadata: { name: "main", attempt: 0 },
            image: { image },
            command: ["sh", "-c", "echo started; sleep 300"],
            logPath: "main/0.log",
            labels: { "io.kubernetes.container.name": "main" },
            linux: {
              securityContext: {
                namespaceOptions: {
                  network: NamespaceMode.NODE,
                  pid: NamespaceMode.CONTAINER,
                },
              },
            },
          },
        });
        await runtime.startContainer({ containerId });
        const running = await runtime.containerStatus({ containerId });
        assert.equal(running.status?.state, ContainerState.CONTAINER_RUNNING);
        assert.equal(running.status?.metadata?.name, "main");
        assert.ok((running.status?.startedAt ?? 0n) > 0n);

        const listed = await runtime.listContainers({
          filter: { podSandboxId },
        });
        assert.deepEqual(listed.containers.map((c) => c.id), [containerId]);

        const exec = await runtime.execSync({
          containerId,
          cmd: ["sh", "-c", "echo out; echo err >&2; exit 3"],
          timeout: 10n,
        });
        assert.equal(new TextDecoder().decode(exec.stdout), "out\n");
        assert.equal(new TextDecoder().decode(exec.stderr), "err\n");
        assert.equal(exec.exitCode, 3);

        await assert.rejects(
          runtime.execSync({ containerId, cmd: ["sleep", "30"] }, {
            timeoutMs: 300,
          }),
          DeadlineExceededError,
        );

        await runtime.stopContainer({ containerId, timeout: 0n });
        const exited = await runtime.containerStatus({ containerId });
        assert.equal(exited.status?.state, ContainerState.CONTAINER_EXITED);
        await runtime.removeContainer({ containerId });
        await assert.rejects(
          runtime.containerStatus({ containerId }),
          NotFoundError,
        );
      } finally {
        await runtime.stopPodSandbox({ podSandboxId });
        await runtime.removePodSandbox({ podSandboxId });
        await Deno.remove(logDirectory, { recursive: true }).catch(() => {});
      }
      await assert.rejects(
        runtime.podSandboxStatus({ podSandboxId }),
        NotFoundError,
      );
    });
  },
});
