/**
 * The CRI contract suite: one set of behaviour tests that every runtime the
 * kubelet talks to must pass: the simulated runtime always, real containerd
 * when `KUBELET_TS_CRI_ENDPOINT` is set. Where they differ, the sim is wrong.
 */

import assert from "node:assert/strict";
import {
  ContainerState,
  type ImageService,
  isUnimplemented,
  NamespaceMode,
  PodSandboxState,
  RuntimeError,
  type RuntimeService,
} from "../../src/runtime/mod.ts";
import { waitFor } from "./helpers.ts";

/** What a contract run needs from the runtime under test. */
export interface ContractTarget extends AsyncDisposable {
  runtime: RuntimeService & ImageService;
  /** An image already present (busybox-like: sh, echo, sleep, true). */
  image: string;
  /** An image a pull can fetch (may be the same repository as `image`). */
  pullableImage: string;
  /** An image reference no registry has. */
  missingImage: string;
  /** Directory under which sandbox log directories may be created. */
  logRoot: string;
}

/** Options of {@linkcode criContractSuite}. */
export interface ContractSuiteOptions {
  /** Skip the whole suite (e.g. no real runtime configured). */
  ignore?: boolean;
}

const GRPC_UNKNOWN = 2;
const GRPC_NOT_FOUND = 5;

async function rejectsWithCode(
  promise: Promise<unknown>,
  code: number,
  message?: RegExp,
): Promise<RuntimeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(
      error instanceof RuntimeError,
      `expected a RuntimeError, got ${error}`,
    );
    assert.equal(error.code, code, `unexpected code for: ${error.message}`);
    if (message) assert.match(error.grpcMessage, message);
    return error;
  }
  assert.fail(`expected the call to fail with gRPC code ${code}`);
}

function uid(): string {
  return crypto.randomUUID();
}

/** The sandbox config shape the tests build. */
export interface TestSandboxConfig {
  metadata: { name: string; uid: string; namespace: string; attempt: number };
  hostname: string;
  logDirectory: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  linux: {
    cgroupParent?: string;
    securityContext: {
      namespaceOptions: {
        network: NamespaceMode;
        pid: NamespaceMode;
        ipc: NamespaceMode;
      };
    };
  };
}

/** The container config shape the tests build. */
export interface TestContainerConfig {
  metadata: { name: string; attempt: number };
  image: { image: string };
  command: string[];
  logPath: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A running test sandbox; disposing stops and removes it. */
export interface TestPod extends AsyncDisposable {
  id: string;
  config: TestSandboxConfig;
}

/** A sandbox config like the kubelet builds (kuberuntime labels.go labels, log dir, namespaces). */
export function sandboxConfig(
  t: ContractTarget,
  options: {
    name?: string;
    uid?: string;
    attempt?: number;
    hostNetwork?: boolean;
    /** Put the pod under cgroup `/kts-test/pod<uid>` (needed for sandbox stats). */
    cgroupParent?: boolean;
  } = {},
): TestSandboxConfig {
  const podUid = options.uid ?? uid();
  const name = options.name ?? `pod-${podUid.slice(0, 8)}`;
  const logDirectory = t.logRoot
    ? `${t.logRoot}/default_${name}_${podUid}`
    : "";
  if (logDirectory) Deno.mkdirSync(logDirectory, { recursive: true });
  return {
    metadata: {
      name,
      uid: podUid,
      namespace: "default",
      attempt: options.attempt ?? 0,
    },
    // A hostNetwork sandbox must not set a hostname (the VM refuses sethostname).
    hostname: options.hostNetwork ? "" : name,
    logDirectory,
    labels: {
      app: "contract",
      "io.kubernetes.pod.name": name,
      "io.kubernetes.pod.namespace": "default",
      "io.kubernetes.pod.uid": podUid,
    },
    annotations: { "kubelet.ts/test": "contract" },
    linux: {
      ...(options.cgroupParent
        ? { cgroupParent: `/kts-test/pod${podUid}` }
        : {}),
      securityContext: {
        namespaceOptions: {
          network: options.hostNetwork ? NamespaceMode.NODE : NamespaceMode.POD,
          pid: NamespaceMode.CONTAINER,
          ipc: options.hostNetwork ? NamespaceMode.NODE : NamespaceMode.POD,
        },
      },
    },
  };
}

type SandboxConfig = TestSandboxConfig;

/** A container config running `command` in the target's image. */
export function containerConfig(
  t: ContractTarget,
  sandbox: SandboxConfig,
  name: string,
  command: string[],
  attempt = 0,
): TestContainerConfig {
  return {
    metadata: { name, attempt },
    image: { image: t.image },
    command,
    logPath: sandbox.logDirectory ? `${name}/${attempt}.log` : "",
    labels: {
      "io.kubernetes.pod.name": sandbox.metadata.name,
      "io.kubernetes.pod.namespace": "default",
      "io.kubernetes.pod.uid": sandbox.metadata.uid,
      "io.kubernetes.container.name": name,
    },
    annotations: { "io.kubernetes.container.restartCount": String(attempt) },
  };
}

/** Runs a sandbox and returns its id plus a cleanup that stops and removes it. */
export async function runPod(
  t: ContractTarget,
  options: Parameters<typeof sandboxConfig>[1] = {},
): Promise<TestPod> {
  const config = sandboxConfig(t, options);
  const { podSandboxId } = await t.runtime.runPodSandbox({ config });
  return {
    id: podSandboxId,
    config,
    async [Symbol.asyncDispose]() {
      await t.runtime.stopPodSandbox({ podSandboxId });
      await t.runtime.removePodSandbox({ podSandboxId });
    },
  };
}

/** Creates and starts a container; returns its id. */
export async function startContainer(
  t: ContractTarget,
  pod: { id: string; config: SandboxConfig },
  name: string,
  command: string[],
): Promise<string> {
  const { containerId } = await t.runtime.createContainer({
    podSandboxId: pod.id,
    config: containerConfig(t, pod.config, name, command),
    sandboxConfig: pod.config,
  });
  await t.runtime.startContainer({ containerId });
  return containerId;
}

async function state(t: ContractTarget, containerId: string) {
  const { status } = await t.runtime.containerStatus({ containerId });
  assert.ok(status);
  return status;
}

/** Registers the contract tests for `label`, each with a fresh target. */
export function criContractSuite(
  label: string,
  setup: () => Promise<ContractTarget>,
  options: ContractSuiteOptions = {},
): void {
  const test = (name: string, fn: (t: ContractTarget) => Promise<void>) =>
    Deno.test({
      name: `[${label}] ${name}`,
      ignore: options.ignore ?? false,
      async fn() {
        await using t = await setup();
        await fn(t);
      },
    });

  test("version() and status() report a ready v1 runtime", async (t) => {
    const v = await t.runtime.version({ version: "0.1.0" });
    assert.equal(v.version, "0.1.0");
    assert.equal(v.runtimeApiVersion, "v1");
    assert.ok(v.runtimeName.length > 0);
    const { status } = await t.runtime.status({});
    const ready = status?.conditions.find((c) => c.type === "RuntimeReady");
    assert.equal(ready?.status, true);
    assert.ok(status?.conditions.some((c) => c.type === "NetworkReady"));
  });

  test("RPCs containerd 1.6 lacks are Unimplemented", async (t) => {
    const unimplemented = (e: unknown) => isUnimplemented(e);
    await assert.rejects(
      t.runtime.checkpointContainer({ containerId: "x" }),
      unimplemented,
    );
    await assert.rejects(t.runtime.runtimeConfig({}), unimplemented);
    await assert.rejects(t.runtime.listMetricDescriptors({}), unimplemented);
    await assert.rejects(t.runtime.listPodSandboxMetrics({}), unimplemented);
    await assert.rejects(
      t.runtime.updatePodSandboxResources({ podSandboxId: "x" }),
      unimplemented,
    );
    const events = t.runtime.getContainerEvents({}, {
      signal: AbortSignal.timeout(10_000),
    });
    await assert.rejects(async () => {
      for await (const _event of events) break;
    }, unimplemented);
  });

  test("runPodSandbox() then stop and remove walks READY, NOTREADY, gone", async (t) => {
    const config = sandboxConfig(t);
    const { podSandboxId } = await t.runtime.runPodSandbox({ config });
    const { status } = await t.runtime.podSandboxStatus({ podSandboxId });
    assert.equal(status?.state, PodSandboxState.SANDBOX_READY);
    assert.equal(status?.metadata?.uid, config.metadata.uid);
    assert.equal(status?.labels["app"], "contract");
    assert.equal(status?.annotations["kubelet.ts/test"], "contract");
    assert.ok((status?.createdAt ?? 0n) > 0n);
    assert.match(status?.network?.ip ?? "", /^\d+\.\d+\.\d+\.\d+$/);

    await t.runtime.stopPodSandbox({ podSandboxId });
    const stopped = await t.runtime.podSandboxStatus({ podSandboxId });
    assert.equal(stopped.status?.state, PodSandboxState.SANDBOX_NOTREADY);
    await t.runtime.removePodSandbox({ podSandboxId });
    await rejectsWithCode(
      t.runtime.podSandboxStatus({ podSandboxId }),
      GRPC_NOT_FOUND,
    );
    const { items } = await t.runtime.listPodSandbox({
      filter: { id: podSandboxId },
    });
    assert.deepEqual(items, []);
  });

  test("runPodSandbox() refuses a hostname on a hostNetwork sandbox", async (t) => {
    const config = {
      ...sandboxConfig(t, { hostNetwork: true }),
      hostname: "not-allowed",
    };
    await rejectsWithCode(
      t.runtime.runPodSandbox({ config }),
      GRPC_UNKNOWN,
      /unable to set hostname without a private UTS namespace/,
    );
    // The failed attempt does not keep the name.
    const ok = await t.runtime.runPodSandbox({
      config: { ...config, hostname: "" },
    });
    await t.runtime.removePodSandbox({ podSandboxId: ok.podSandboxId });
  });

  test("runPodSandbox() with a live name and attempt fails as reserved", async (t) => {
    await using pod = await runPod(t);
    const again = sandboxConfig(t, {
      name: pod.config.metadata.name,
      uid: pod.config.metadata.uid,
    });
    const error = await rejectsWithCode(
      t.runtime.runPodSandbox({ config: again }),
      GRPC_UNKNOWN,
      /is reserved for/,
    );
    assert.match(error.grpcMessage, new RegExp(pod.id));
    // A new attempt is a new name.
    const bumped = { ...again, metadata: { ...again.metadata, attempt: 1 } };
    const { podSandboxId } = await t.runtime.runPodSandbox({ config: bumped });
    await t.runtime.stopPodSandbox({ podSandboxId });
    await t.runtime.removePodSandbox({ podSandboxId });
  });

  test("createContainer() with a live name and attempt fails as reserved", async (t) => {
    await using pod = await runPod(t);
    const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
    await rejectsWithCode(
      t.runtime.createContainer({
        podSandboxId: pod.id,
        config: containerConfig(t, pod.config, "app", ["sleep", "3600"]),
        sandboxConfig: pod.config,
      }),
      GRPC_UNKNOWN,
      new RegExp(`is reserved for "${id}"`),
    );
    await t.runtime.removeContainer({ containerId: id });
    const { containerId } = await t.runtime.createContainer({
      podSandboxId: pod.id,
      config: containerConfig(t, pod.config, "app", ["sleep", "3600"]),
      sandboxConfig: pod.config,
    });
    assert.notEqual(containerId, id);
  });

  test("container lifecycle: CREATED, RUNNING, EXITED by kill, removed", async (t) => {
    await using pod = await runPod(t);
    const config = containerConfig(t, pod.config, "app", ["sleep", "3600"]);
    const { containerId } = await t.runtime.createContainer({
      podSandboxId: pod.id,
      config,
      sandboxConfig: pod.config,
    });
    let s = await state(t, containerId);
    assert.equal(s.state, ContainerState.CONTAINER_CREATED);
    assert.equal(s.startedAt, 0n);
    assert.equal(s.metadata?.name, "app");
    assert.equal(s.labels["io.kubernetes.container.name"], "app");
    assert.equal(s.annotations["io.kubernetes.container.restartCount"], "0");
    if (config.logPath) {
      assert.equal(s.logPath, `${pod.config.logDirectory}/${config.logPath}`);
    }

    await t.runtime.startContainer({ containerId });
    s = await state(t, containerId);
    assert.equal(s.state, ContainerState.CONTAINER_RUNNING);
    assert.ok(s.startedAt >= s.createdAt);
    await rejectsWithCode(
      t.runtime.startContainer({ containerId }),
      GRPC_UNKNOWN,
    );

    await t.runtime.stopContainer({ containerId, timeout: 0n });
    s = await state(t, containerId);
    assert.equal(s.state, ContainerState.CONTAINER_EXITED);
    assert.equal(s.exitCode, 137);
    assert.equal(s.reason, "Error");
    assert.ok(s.finishedAt >= s.startedAt);
    await t.runtime.stopContainer({ containerId, timeout: 0n }); // idempotent

    await t.runtime.removeContainer({ containerId });
    await rejectsWithCode(
      t.runtime.containerStatus({ containerId }),
      GRPC_NOT_FOUND,
    );
  });

  test("a container's own exit gives its exit code and reason", async (t) => {
    await using pod = await runPod(t);
    const failed = await startContainer(t, pod, "fails", [
      "sh",
      "-c",
      "echo bye; exit 3",
    ]);
    const done = await startContainer(t, pod, "done", ["true"]);
    const exited = async (id: string) =>
      await waitFor(async () => {
        const s = await state(t, id);
        return s.state === ContainerState.CONTAINER_EXITED ? s : undefined;
      });
    const f = await exited(failed);
    assert.equal(f.exitCode, 3);
    assert.equal(f.reason, "Error");
    const d = await exited(done);
    assert.equal(d.exitCode, 0);
    assert.equal(d.reason, "Completed");
  });

  test("stopContainer() with a grace period: SIGTERM ends sleep, a TERM trap exits 0", async (t) => {
    await using pod = await runPod(t);
    const plain = await startContainer(t, pod, "plain", ["sleep", "3600"]);
    const trapped = await startContainer(t, pod, "trapped", [
      "sh",
      "-c",
      "trap 'exit 0' TERM; sleep 3600 & wait",
    ]);
    await t.runtime.stopContainer({ containerId: plain, timeout: 10n });
    const p = await state(t, plain);
    assert.equal(p.state, ContainerState.CONTAINER_EXITED);
    assert.equal(p.exitCode, 143);
    assert.equal(p.reason, "Error");
    await t.runtime.stopContainer({ containerId: trapped, timeout: 10n });
    const q = await state(t, trapped);
    assert.equal(q.exitCode, 0);
    assert.equal(q.reason, "Completed");
  });

  test("stopPodSandbox() kills its containers; a stopped sandbox refuses new ones", async (t) => {
    await using pod = await runPod(t);
    const running = await startContainer(t, pod, "app", ["sleep", "3600"]);
    const { containerId: created } = await t.runtime.createContainer({
      podSandboxId: pod.id,
      config: containerConfig(t, pod.config, "late", ["sleep", "3600"]),
      sandboxConfig: pod.config,
    });
    await t.runtime.stopPodSandbox({ podSandboxId: pod.id });
    await t.runtime.stopPodSandbox({ podSandboxId: pod.id }); // idempotent
    const killed = await state(t, running);
    assert.equal(killed.state, ContainerState.CONTAINER_EXITED);
    assert.equal(killed.exitCode, 137);
    await rejectsWithCode(
      t.runtime.startContainer({ containerId: created }),
      GRPC_UNKNOWN,
      /is not running/,
    );
    const failed = await state(t, created);
    assert.equal(failed.state, ContainerState.CONTAINER_EXITED);
    assert.equal(failed.exitCode, 128);
    assert.equal(failed.reason, "StartError");
    await rejectsWithCode(
      t.runtime.createContainer({
        podSandboxId: pod.id,
        config: containerConfig(t, pod.config, "later", ["sleep", "3600"]),
        sandboxConfig: pod.config,
      }),
      GRPC_NOT_FOUND,
    );
  });

  test("removePodSandbox() force-removes a READY sandbox and its containers", async (t) => {
    const config = sandboxConfig(t);
    const { podSandboxId } = await t.runtime.runPodSandbox({ config });
    const pod = { id: podSandboxId, config };
    const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
    await t.runtime.removePodSandbox({ podSandboxId });
    await rejectsWithCode(
      t.runtime.containerStatus({ containerId: id }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.podSandboxStatus({ podSandboxId }),
      GRPC_NOT_FOUND,
    );
    // The name is free again.
    const again = await t.runtime.runPodSandbox({ config });
    await t.runtime.removePodSandbox({ podSandboxId: again.podSandboxId });
  });

  test("listContainers() and listPodSandbox() filter by id, state, sandbox and labels", async (t) => {
    await using pod = await runPod(t);
    await using other = await runPod(t);
    const running = await startContainer(t, pod, "web", ["sleep", "3600"]);
    const { containerId: created } = await t.runtime.createContainer({
      podSandboxId: pod.id,
      config: containerConfig(t, pod.config, "side", ["sleep", "3600"]),
      sandboxConfig: pod.config,
    });
    const elsewhere = await startContainer(t, other, "web", ["sleep", "3600"]);
    const ids = async (filter: Record<string, unknown>) =>
      (await t.runtime.listContainers({ filter })).containers.map((c) => c.id)
        .sort();

    assert.deepEqual(await ids({ id: running }), [running]);
    assert.deepEqual(
      await ids({ podSandboxId: pod.id }),
      [created, running].sort(),
    );
    assert.deepEqual(
      await ids({
        podSandboxId: pod.id,
        state: { state: ContainerState.CONTAINER_RUNNING },
      }),
      [running],
    );
    assert.deepEqual(
      await ids({
        labelSelector: { "io.kubernetes.pod.uid": other.config.metadata.uid },
      }),
      [elsewhere],
    );
    assert.deepEqual(
      await ids({
        labelSelector: { "io.kubernetes.container.name": "side" },
        podSandboxId: pod.id,
      }),
      [created],
    );
    assert.deepEqual(await ids({ id: "0123456789abcdef0123456789abcdef" }), []);

    const sandboxes = async (filter: Record<string, unknown>) =>
      (await t.runtime.listPodSandbox({ filter })).items.map((s) => s.id)
        .sort();
    assert.deepEqual(await sandboxes({ id: pod.id }), [pod.id]);
    assert.deepEqual(
      await sandboxes({
        labelSelector: { "io.kubernetes.pod.uid": other.config.metadata.uid },
      }),
      [other.id],
    );
    await t.runtime.stopPodSandbox({ podSandboxId: other.id });
    const ready = await sandboxes({
      state: { state: PodSandboxState.SANDBOX_READY },
    });
    assert.ok(ready.includes(pod.id));
    assert.ok(!ready.includes(other.id));
    const { containers } = await t.runtime.listContainers({
      filter: { id: elsewhere },
    });
    assert.equal(containers[0]?.state, ContainerState.CONTAINER_EXITED);
  });

  test("unknown ids: status, exec and stop are NotFound, remove succeeds", async (t) => {
    const missing = "f".repeat(64);
    await rejectsWithCode(
      t.runtime.containerStatus({ containerId: missing }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.podSandboxStatus({ podSandboxId: missing }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.execSync({ containerId: missing, cmd: ["true"] }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.startContainer({ containerId: missing }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.containerStats({ containerId: missing }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.portForward({ podSandboxId: missing, port: [80] }),
      GRPC_NOT_FOUND,
    );
    // containerd 1.6: Stop* of an unknown id is NotFound (kubelet treats it as done) ...
    await rejectsWithCode(
      t.runtime.stopContainer({ containerId: missing, timeout: 0n }),
      GRPC_NOT_FOUND,
    );
    await rejectsWithCode(
      t.runtime.stopPodSandbox({ podSandboxId: missing }),
      GRPC_NOT_FOUND,
    );
    // ... while Remove* of an unknown id succeeds.
    await t.runtime.removeContainer({ containerId: missing });
    await t.runtime.removePodSandbox({ podSandboxId: missing });
    await rejectsWithCode(
      t.runtime.containerStatus({ containerId: "" }),
      GRPC_UNKNOWN,
    );
  });

  test("images: status, pull, list, remove; missing images fail NotFound", async (t) => {
    const present = await t.runtime.imageStatus({ image: { image: t.image } });
    assert.match(present.image?.id ?? "", /^sha256:[0-9a-f]{64}$/);

    await t.runtime.removeImage({ image: { image: t.pullableImage } });
    const before = await t.runtime.imageStatus({
      image: { image: t.pullableImage },
    });
    assert.equal(before.image, undefined);
    const { imageRef } = await t.runtime.pullImage({
      image: { image: t.pullableImage },
    });
    assert.match(imageRef, /^sha256:[0-9a-f]{64}$/);
    const after = await t.runtime.imageStatus({
      image: { image: t.pullableImage },
    });
    assert.equal(after.image?.id, imageRef);
    assert.ok(
      after.image?.repoTags.some((tag) => tag.endsWith(t.pullableImage)),
    );
    assert.ok((after.image?.size ?? 0n) > 0n);
    const byId = await t.runtime.imageStatus({ image: { image: imageRef } });
    assert.equal(byId.image?.id, imageRef);
    const { images } = await t.runtime.listImages({});
    assert.ok(images.some((i) => i.id === imageRef));
    await t.runtime.removeImage({ image: { image: t.pullableImage } });
    const gone = await t.runtime.imageStatus({
      image: { image: t.pullableImage },
    });
    assert.equal(gone.image, undefined);
    await t.runtime.removeImage({ image: { image: t.pullableImage } }); // idempotent

    await rejectsWithCode(
      t.runtime.pullImage({ image: { image: t.missingImage } }),
      GRPC_NOT_FOUND,
    );
    await using pod = await runPod(t);
    const config = {
      ...containerConfig(t, pod.config, "nope", ["true"]),
      image: { image: t.missingImage },
    };
    await rejectsWithCode(
      t.runtime.createContainer({
        podSandboxId: pod.id,
        config,
        sandboxConfig: pod.config,
      }),
      GRPC_NOT_FOUND,
    );
    const fs = await t.runtime.imageFsInfo({});
    assert.ok(fs.imageFilesystems.length > 0);
    assert.ok((fs.imageFilesystems[0]?.usedBytes?.value ?? 0n) > 0n);
  });

  test("execSync() returns stdout, stderr and exit code; fails on stopped containers", async (t) => {
    await using pod = await runPod(t);
    const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
    const decoder = new TextDecoder();
    const hello = await t.runtime.execSync({
      containerId: id,
      cmd: ["echo", "hello"],
      timeout: 10n,
    });
    assert.equal(decoder.decode(hello.stdout), "hello\n");
    assert.equal(hello.exitCode, 0);
    const mixed = await t.runtime.execSync({
      containerId: id,
      cmd: ["sh", "-c", "echo out; echo err >&2; exit 3"],
      timeout: 10n,
    });
    assert.equal(decoder.decode(mixed.stdout), "out\n");
    assert.equal(decoder.decode(mixed.stderr), "err\n");
    assert.equal(mixed.exitCode, 3);
    await rejectsWithCode(
      t.runtime.execSync({
        containerId: id,
        cmd: ["no-such-binary"],
        timeout: 10n,
      }),
      GRPC_UNKNOWN,
      /executable file not found/,
    );
    await t.runtime.stopContainer({ containerId: id, timeout: 0n });
    await rejectsWithCode(
      t.runtime.execSync({ containerId: id, cmd: ["true"], timeout: 10n }),
      GRPC_UNKNOWN,
    );
  });
}
