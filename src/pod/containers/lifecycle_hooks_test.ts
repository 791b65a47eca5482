import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { CaptureLogger } from "../../log/testing.ts";
import { FakeRuntime } from "../../runtime/testing.ts";
import { httpGetRequest, runLifecycleHook } from "./lifecycle_hooks.ts";
import type { LifecycleHandler, Pod } from "../types.ts";

function pod(spec: Partial<Pod["spec"]> = {}): Pod {
  return {
    metadata: { name: "web", namespace: "prod", uid: "u-1" },
    spec: {
      containers: [{
        name: "app",
        ports: [{ name: "admin", containerPort: 9090 }],
      }],
      ...spec,
    },
  };
}

function runtimeWithIp(ip: string): FakeRuntime {
  const runtime = new FakeRuntime();
  runtime.respond("listPodSandbox", () => ({
    items: [{ id: "old", state: 1, createdAt: 2n }, {
      id: "s1",
      state: 0,
      createdAt: 1n,
    }],
  }));
  runtime.respond("podSandboxStatus", (r) => ({
    status: { id: r.podSandboxId ?? "", network: { ip } },
  }));
  return runtime;
}

function run(
  handler: LifecycleHandler,
  deps: { runtime: FakeRuntime; fetch?: typeof fetch },
  p = pod(),
) {
  return runLifecycleHook(
    { ...deps, clock: new FakeClock(), logger: new CaptureLogger() },
    { pod: p, containerName: "app", containerId: "c1", handler },
    { timeoutSeconds: 0 },
  );
}

Deno.test("runLifecycleHook() sends an httpGet hook to the pod IP with a named port and headers", async () => {
  const seen: Request[] = [];
  const runtime = runtimeWithIp("10.88.0.7");
  const failure = await run({
    httpGet: {
      path: "drain",
      port: "admin",
      httpHeaders: [{ name: "X-Reason", value: "stop" }],
    },
  }, {
    runtime,
    fetch: (input, init) => {
      seen.push(new Request(input, init));
      return Promise.resolve(new Response("busy", { status: 500 }));
    },
  });
  // only transport errors fail an HTTP hook: a 500 is a success, as upstream
  assert.equal(failure, undefined);
  assert.equal(seen[0]?.url, "http://10.88.0.7:9090/drain");
  assert.equal(seen[0]?.headers.get("x-reason"), "stop");
  assert.equal(seen[0]?.headers.get("user-agent"), "kube-lifecycle/1.34");
  assert.deepEqual(runtime.requestsOf("podSandboxStatus"), [{
    podSandboxId: "s1",
  }]);
});

Deno.test("runLifecycleHook() reports an unreachable httpGet hook with upstream's message", async () => {
  const failure = await run({
    httpGet: { path: "/hook", port: 8080, host: "10.0.0.9", scheme: "HTTPS" },
  }, {
    runtime: new FakeRuntime(),
    fetch: () => Promise.reject(new TypeError("connection refused")),
  });
  assert.equal(
    failure,
    'HTTP lifecycle hook (/hook) for Container "app" in Pod "web_prod(u-1)" failed - error: connection refused',
  );
});

Deno.test("runLifecycleHook() retries an HTTPS hook over HTTP without credentials when the server speaks HTTP", async () => {
  const urls: string[] = [];
  const failure = await run({
    httpGet: {
      port: 8443,
      host: "10.0.0.9",
      scheme: "HTTPS",
      httpHeaders: [{ name: "Authorization", value: "Bearer x" }],
    },
  }, {
    runtime: new FakeRuntime(),
    fetch: (input, init) => {
      const r = new Request(input, init);
      urls.push(`${r.url} ${r.headers.get("authorization")}`);
      return r.url.startsWith("https:")
        ? Promise.reject(
          new TypeError("received corrupt message of type InvalidContentType"),
        )
        : Promise.resolve(new Response("ok"));
    },
  });
  assert.equal(failure, undefined);
  assert.deepEqual(urls, [
    "https://10.0.0.9:8443/ Bearer x",
    "http://10.0.0.9:8443/ null",
  ]);
});

Deno.test("runLifecycleHook() fails when the pod has no IP, except on the host network", async () => {
  const none = runtimeWithIp("");
  const failure = await run({ httpGet: { port: 80 } }, {
    runtime: none,
    fetch: () => Promise.resolve(new Response("")),
  });
  assert.match(failure ?? "", /failed to find networking container/);
  const urls: string[] = [];
  await run({ httpGet: { port: 80 } }, {
    runtime: runtimeWithIp(""),
    fetch: (input) => {
      urls.push(String(input));
      return Promise.resolve(new Response(""));
    },
  }, pod({ hostNetwork: true }));
  assert.deepEqual(urls, ["http://127.0.0.1:80/"]);
});

Deno.test("runLifecycleHook() fails a tcpSocket hook at run time, as upstream", async () => {
  const failure = await run({ tcpSocket: { port: 80 } }, {
    runtime: new FakeRuntime(),
  });
  assert.match(failure ?? "", /^Cannot run handler: invalid handler: /);
});

Deno.test("runLifecycleHook() reports a failed exec hook with its exit code, stderr and output", async () => {
  const runtime = new FakeRuntime();
  runtime.respond("execSync", () => ({
    exitCode: 2,
    stdout: new TextEncoder().encode("out\n"),
    stderr: new TextEncoder().encode("bad"),
  }));
  const failure = await run({ exec: { command: ["sh", "-c", "x"] } }, {
    runtime,
  });
  assert.equal(
    failure,
    `Exec lifecycle hook ([sh -c x]) for Container "app" in Pod "web_prod(u-1)" failed - error: command 'sh -c x' exited with 2: bad, message: "out\\nbad"`,
  );
});

Deno.test("httpGetRequest() brackets IPv6 hosts and keeps the scheme", () => {
  const { url } = httpGetRequest({
    pod: pod(),
    containerName: "app",
    containerId: "c1",
    handler: { httpGet: { port: 443, scheme: "HTTPS", path: "/x" } },
  }, "fd00::1");
  assert.equal(url, "https://[fd00::1]:443/x");
});
