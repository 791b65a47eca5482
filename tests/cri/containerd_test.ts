/**
 * Real-containerd-only tests (skipped unless `KUBELET_TS_CRI_ENDPOINT` is set;
 * bring the environment up with `scripts/cri_env.sh up`): the client's start-up
 * handshake and call deadlines, networking, logs, stats, exec timeouts,
 * registry pulls with auth, streaming URLs, and every RPC at least once.
 * Behaviour both runtimes share is in the contract suite (`contract.ts`).
 */

import assert from "node:assert/strict";
import {
  connectRuntime,
  ContainerState,
  createCriRuntime,
  DeadlineExceededError,
  isNotFound,
  RuntimeError,
} from "../../src/runtime/mod.ts";
import { type ContractTarget, runPod, startContainer } from "./contract.ts";
import { criEnv, waitFor } from "./helpers.ts";

const env = criEnv();

function real(name: string, fn: (t: ContractTarget) => Promise<void>): void {
  Deno.test({
    name: `[containerd] ${name}`,
    ignore: !env.endpoint,
    async fn() {
      const runtime = createCriRuntime({
        endpoint: env.endpoint,
        timeoutMs: 60_000,
      });
      await using t: ContractTarget = {
        runtime,
        image: env.image,
        pullableImage: env.registryImage,
        missingImage: "",
        logRoot: `${env.root}/pods`,
        [Symbol.asyncDispose]: () => runtime.close(),
      };
      await fn(t);
    },
  });
}

const decoder = new TextDecoder();

Deno.test({
  name: "[containerd] connectRuntime() handshake reports containerd on CRI v1",
  ignore: !env.endpoint,
  async fn() {
    const connected = await connectRuntime({ endpoint: env.endpoint });
    await using _runtime = connected.runtime;
    assert.equal(connected.version.version, "0.1.0");
    assert.equal(connected.version.runtimeApiVersion, "v1");
    assert.equal(connected.version.runtimeName, "containerd");
    assert.equal(connected.readiness.runtimeReady, true);
  },
});

real("a call past its timeoutMs fails DeadlineExceeded", async (t) => {
  await using pod = await runPod(t);
  const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
  await assert.rejects(
    t.runtime.execSync({ containerId: id, cmd: ["sleep", "30"] }, {
      timeoutMs: 300,
    }),
    DeadlineExceededError,
  );
});

real(
  "a CNI pod gets an IP from the bridge subnet; a hostNetwork pod gets none",
  async (t) => {
    await using pod = await runPod(t);
    const { status } = await t.runtime.podSandboxStatus({
      podSandboxId: pod.id,
    });
    assert.match(status?.network?.ip ?? "", /^10\.88\.\d+\.\d+$/);
    const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
    const ip = await t.runtime.execSync({
      containerId: id,
      cmd: ["ip", "-4", "addr", "show", "eth0"],
      timeout: 10n,
    });
    assert.match(
      decoder.decode(ip.stdout),
      new RegExp(status?.network?.ip ?? "none"),
    );

    await using host = await runPod(t, { hostNetwork: true });
    const hostStatus = await t.runtime.podSandboxStatus({
      podSandboxId: host.id,
    });
    assert.equal(hostStatus.status?.network?.ip ?? "", "");
    const hid = await startContainer(t, host, "app", ["sleep", "3600"]);
    const links = await t.runtime.execSync({
      containerId: hid,
      cmd: ["ip", "link"],
      timeout: 10n,
    });
    assert.match(decoder.decode(links.stdout), /eth0/);
    await t.runtime.stopPodSandbox({ podSandboxId: pod.id });
    const stopped = await t.runtime.podSandboxStatus({ podSandboxId: pod.id });
    assert.equal(stopped.status?.network?.ip ?? "", "");
  },
);

real(
  "container logs are written in CRI format at the requested path",
  async (t) => {
    await using pod = await runPod(t);
    const id = await startContainer(t, pod, "logger", [
      "sh",
      "-c",
      "echo to-out; echo to-err >&2",
    ]);
    const { status } = await t.runtime.containerStatus({ containerId: id });
    const path = `${pod.config.logDirectory}/logger/0.log`;
    assert.equal(status?.logPath, path);
    const text = await waitFor(async () => {
      const s = await t.runtime.containerStatus({ containerId: id });
      if (s.status?.state !== ContainerState.CONTAINER_EXITED) return undefined;
      const body = await Deno.readTextFile(path);
      return body.includes("to-err") ? body : undefined;
    });
    const lines = text.trim().split("\n");
    assert.equal(lines.length, 2);
    const ts = String
      .raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`;
    assert.ok(
      lines.some((l) => new RegExp(`^${ts} stdout F to-out$`).test(l)),
      text,
    );
    assert.ok(
      lines.some((l) => new RegExp(`^${ts} stderr F to-err$`).test(l)),
      text,
    );
    await t.runtime.reopenContainerLog({ containerId: id }).then(
      () => assert.fail("reopening the log of an exited container should fail"),
      (e) => assert.ok(e instanceof RuntimeError),
    );
  },
);

real(
  "execSync() honours its timeout; exec/attach/portForward return stream URLs",
  async (t) => {
    await using pod = await runPod(t);
    const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
    await assert.rejects(
      t.runtime.execSync({
        containerId: id,
        cmd: ["sleep", "10"],
        timeout: 1n,
      }),
      (e) =>
        e instanceof RuntimeError && /timeout|deadline/i.test(e.grpcMessage),
    );
    const exec = await t.runtime.exec({
      containerId: id,
      cmd: ["sh"],
      stdout: true,
      stderr: true,
    });
    assert.match(exec.url, /^http:\/\/127\.0\.0\.1:\d+\/exec\//);
    const attach = await t.runtime.attach({ containerId: id, stdout: true });
    assert.match(attach.url, /^http:\/\/127\.0\.0\.1:\d+\/attach\//);
    const pf = await t.runtime.portForward({
      podSandboxId: pod.id,
      port: [80],
    });
    assert.match(pf.url, /^http:\/\/127\.0\.0\.1:\d+\/portforward\//);
    await t.runtime.reopenContainerLog({ containerId: id });
    await t.runtime.updateContainerResources({
      containerId: id,
      linux: { cpuShares: 512n, memoryLimitInBytes: 64n * 1024n * 1024n },
    });
    const { status } = await t.runtime.containerStatus({ containerId: id });
    assert.equal(
      status?.resources?.linux?.memoryLimitInBytes,
      64n * 1024n * 1024n,
    );
  },
);

real("stats: container, sandbox and their lists", async (t) => {
  // Sandbox stats need a cgroup parent, as the kubelet always sets one.
  await using pod = await runPod(t, { cgroupParent: true });
  const id = await startContainer(t, pod, "app", ["sleep", "3600"]);
  const { stats } = await t.runtime.containerStats({ containerId: id });
  assert.equal(stats?.attributes?.id, id);
  assert.ok((stats?.memory?.workingSetBytes?.value ?? 0n) > 0n);
  const list = await t.runtime.listContainerStats({
    filter: { podSandboxId: pod.id },
  });
  assert.deepEqual(list.stats.map((s) => s.attributes?.id), [id]);
  const sandbox = await t.runtime.podSandboxStats({ podSandboxId: pod.id });
  assert.equal(sandbox.stats?.attributes?.id, pod.id);
  const all = await t.runtime.listPodSandboxStats({ filter: { id: pod.id } });
  assert.equal(all.stats.length, 1);
});

real(
  "pullImage() from the local registry, with and without auth",
  async (t) => {
    await t.runtime.removeImage({ image: { image: env.authRegistryImage } });
    await assert.rejects(
      t.runtime.pullImage({ image: { image: env.authRegistryImage } }),
      (e) =>
        e instanceof RuntimeError && /401 Unauthorized/.test(e.grpcMessage),
    );
    const { imageRef } = await t.runtime.pullImage({
      image: { image: env.authRegistryImage },
      auth: { username: env.authUser, password: env.authPassword },
    });
    const status = await t.runtime.imageStatus({ image: { image: imageRef } });
    assert.ok(status.image?.repoTags.includes(env.authRegistryImage));
    await t.runtime.removeImage({ image: { image: env.authRegistryImage } });
    const gone = await t.runtime.imageStatus({
      image: { image: env.authRegistryImage },
    });
    assert.equal(gone.image, undefined);
  },
);

real("updateRuntimeConfig() and imageFsInfo() answer", async (t) => {
  await t.runtime.updateRuntimeConfig({
    runtimeConfig: { networkConfig: { podCidr: "10.88.0.0/16" } },
  });
  const fs = await t.runtime.imageFsInfo({});
  assert.match(fs.imageFilesystems[0]?.fsId?.mountpoint ?? "", /containerd/);
  await assert.rejects(
    t.runtime.podSandboxStats({ podSandboxId: "f".repeat(64) }),
    isNotFound,
  );
});
