import assert from "node:assert/strict";
import { createStreamingHost } from "./streaming_host.ts";
import type { Pod } from "../pod/mod.ts";
import { NotFoundError } from "../runtime/mod.ts";
import { FakeRuntime } from "../runtime/testing.ts";
import { HttpError } from "../server/mod.ts";

const POD: Pod = {
  metadata: { name: "web", namespace: "ns", uid: "uid-1" },
  spec: {
    containers: [{ name: "app", image: "busybox", tty: true }],
  },
};

function setup(pods: Pod[] = [POD]) {
  const runtime = new FakeRuntime();
  const host = createStreamingHost({
    kubelet: { podConfig: { pods: () => pods } } as never,
    runtime,
  });
  return { runtime, host };
}

const streams = { stdin: true, stdout: true, stderr: true, tty: false };
const target = { namespace: "ns", pod: "web", container: "app" };

async function status(p: Promise<unknown>): Promise<[number, string]> {
  try {
    await p;
  } catch (error) {
    if (error instanceof HttpError) return [error.status, error.message];
    throw error;
  }
  return [0, ""];
}

Deno.test("exec finds the running container by its pod's labels and returns CRI's URL", async () => {
  const { runtime, host } = setup();
  runtime.respond("listContainers", () => ({
    containers: [{ id: "c-1", state: 1 }],
  }));
  runtime.respond("exec", () => ({ url: "http://127.0.0.1:1/exec/t" }));
  assert.equal(
    await host.exec(target, ["ls", "-l"], streams),
    "http://127.0.0.1:1/exec/t",
  );
  const [list] = runtime.requestsOf("listContainers");
  assert.deepEqual(list?.filter?.labelSelector, {
    "io.kubernetes.pod.name": "web",
    "io.kubernetes.pod.namespace": "ns",
    "io.kubernetes.container.name": "app",
    "io.kubernetes.pod.uid": "uid-1",
  });
  assert.equal(list?.filter?.state?.state, 1);
  const [exec] = runtime.requestsOf("exec");
  assert.deepEqual(
    { id: exec?.containerId, cmd: exec?.cmd, stdin: exec?.stdin },
    { id: "c-1", cmd: ["ls", "-l"], stdin: true },
  );
});

Deno.test("unknown pods, wrong UIDs and stopped containers are 404s with their reason", async () => {
  const { runtime, host } = setup();
  assert.deepEqual(
    await status(host.exec({ ...target, pod: "nope" }, ["ls"], streams)),
    [404, "pod does not exist"],
  );
  assert.deepEqual(
    await status(host.exec({ ...target, uid: "other" }, ["ls"], streams)),
    [404, "pod not found"],
  );
  const [code, message] = await status(host.exec(target, ["ls"], streams));
  assert.equal(code, 404);
  assert.match(message, /^container not found \("app"\)/);
  assert.deepEqual(runtime.requestsOf("exec"), []);
});

Deno.test("attach takes the TTY from the container spec", async () => {
  const { runtime, host } = setup();
  runtime.respond("listContainers", () => ({
    containers: [{ id: "c-1", state: 1 }],
  }));
  runtime.respond("attach", () => ({ url: "http://127.0.0.1:1/attach/t" }));
  await host.attach(target, streams);
  const [attach] = runtime.requestsOf("attach");
  assert.equal(attach?.tty, true);
  assert.equal(attach?.stderr, false);
  assert.deepEqual(
    await status(host.attach({ ...target, container: "ghost" }, streams)),
    [404, "container ghost not found in pod web"],
  );
});

Deno.test("port-forward uses the pod's ready sandbox; CRI NotFound is a 404", async () => {
  const { runtime, host } = setup();
  assert.equal((await status(host.portForward(target, [80])))[0], 404);
  runtime.respond("listPodSandbox", () => ({
    items: [{ id: "sb-1", state: 0 }],
  }));
  runtime.injectError("portForward", new NotFoundError("sandbox gone"));
  const [code, message] = await status(host.portForward(target, [80]));
  assert.equal(code, 404);
  assert.match(message, /sandbox gone/);
  assert.equal(runtime.requestsOf("portForward")[0]?.podSandboxId, "sb-1");
});

Deno.test("run answers stdout then stderr, and a non-zero exit as a 500 naming it", async () => {
  const { runtime, host } = setup();
  runtime.respond("listContainers", () => ({
    containers: [{ id: "c-1", state: 1 }],
  }));
  const enc = new TextEncoder();
  runtime.respond("execSync", () => ({
    stdout: enc.encode("out\n"),
    stderr: enc.encode("err\n"),
    exitCode: 0,
  }));
  assert.equal(
    new TextDecoder().decode(await host.run(target, ["echo"])),
    "out\nerr\n",
  );
  runtime.respond("execSync", () => ({
    stdout: new Uint8Array(),
    stderr: enc.encode("boom"),
    exitCode: 2,
  }));
  assert.deepEqual(await status(host.run(target, ["false", "x"])), [
    500,
    "command 'false x' exited with 2: boom",
  ]);
});
