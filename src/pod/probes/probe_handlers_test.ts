import assert from "node:assert/strict";
import { FakeClock } from "../../clock/testing.ts";
import { DeadlineExceededError, RuntimeError } from "../../runtime/mod.ts";
import type { ExecSyncRequestInit } from "../../runtime/mod.ts";
import {
  type ProbeConnect,
  type ProbeHandlerDeps,
  type ProbeTarget,
  resolveProbePort,
  runProbe,
} from "./probe_handlers.ts";
import type { Container, Probe } from "../types.ts";

const container: Container = {
  name: "app",
  image: "img",
  ports: [{ name: "http", containerPort: 8080 }],
};

function target(overrides: Partial<ProbeTarget> = {}): ProbeTarget {
  return {
    pod: {
      metadata: { name: "web", namespace: "default", uid: "u1" },
      spec: { containers: [container] },
    },
    status: { podIP: "10.0.0.5" },
    container,
    containerId: "c1",
    ...overrides,
  };
}

function execDeps(
  reply: (request: ExecSyncRequestInit) => Promise<{
    stdout: Uint8Array;
    stderr: Uint8Array;
    exitCode: number;
  }>,
  seen: ExecSyncRequestInit[] = [],
): ProbeHandlerDeps & { signal: AbortSignal } {
  return {
    clock: new FakeClock(),
    signal: new AbortController().signal,
    runtime: {
      execSync: (request) => {
        seen.push(request);
        // deno-lint-ignore no-explicit-any
        return reply(request) as any;
      },
    },
  };
}

const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("runProbe() exec: exit code 0 is success, others fail with the output, timeout is sent", async () => {
  const seen: ExecSyncRequestInit[] = [];
  const probe: Probe = { exec: { command: ["cat", "/ok"] }, timeoutSeconds: 4 };
  const ok = await runProbe(
    probe,
    target(),
    execDeps(
      () =>
        Promise.resolve({
          stdout: bytes("fine"),
          stderr: bytes(""),
          exitCode: 0,
        }),
      seen,
    ),
  );
  assert.deepEqual(ok, { result: "success", output: "fine" });
  assert.deepEqual(seen[0]?.cmd, ["cat", "/ok"]);
  assert.equal(seen[0]?.containerId, "c1");
  assert.equal(seen[0]?.timeout, 4n);
  const bad = await runProbe(
    probe,
    target(),
    execDeps(() =>
      Promise.resolve({
        stdout: bytes(""),
        stderr: bytes("no such file"),
        exitCode: 1,
      })
    ),
  );
  assert.deepEqual(bad, { result: "failure", output: "no such file" });
});

Deno.test("runProbe() exec: a runtime timeout is a failure, other runtime errors are unknown", async () => {
  const probe: Probe = { exec: { command: ["sleep", "9"] } };
  const timedOut = await runProbe(
    probe,
    target(),
    execDeps(() => Promise.reject(new DeadlineExceededError("timeout 1s"))),
  );
  assert.equal(timedOut.result, "failure");
  const missing = await runProbe(
    probe,
    target(),
    execDeps(() =>
      Promise.reject(new RuntimeError(2, "executable file not found"))
    ),
  );
  assert.equal(missing.result, "unknown");
});

function netDeps(
  options: { fetch?: typeof fetch; connect?: ProbeConnect },
): ProbeHandlerDeps & { signal: AbortSignal; clock: FakeClock } {
  return {
    clock: new FakeClock(),
    signal: new AbortController().signal,
    runtime: { execSync: () => Promise.reject(new Error("unused")) },
    ...options,
  };
}

Deno.test("runProbe() httpGet: GETs the pod IP and named port with headers; 2xx/3xx succeed, others fail", async () => {
  const requests: Request[] = [];
  let status = 200;
  const deps = netDeps({
    fetch: (input, init) => {
      requests.push(new Request(input, init));
      return Promise.resolve(new Response("body text", { status }));
    },
  });
  const probe: Probe = {
    httpGet: {
      path: "healthz",
      port: "http",
      httpHeaders: [{ name: "X-Probe", value: "yes" }],
    },
  };
  assert.equal((await runProbe(probe, target(), deps)).result, "success");
  const r = requests[0]!;
  assert.equal(r.url, "http://10.0.0.5:8080/healthz");
  assert.equal(r.method, "GET");
  assert.equal(r.headers.get("x-probe"), "yes");
  assert.equal(r.headers.get("user-agent"), "kube-probe/1.34");
  assert.equal(r.headers.get("accept"), "*/*");
  status = 300;
  assert.equal((await runProbe(probe, target(), deps)).result, "success");
  status = 500;
  assert.deepEqual(await runProbe(probe, target(), deps), {
    result: "failure",
    output: "HTTP probe failed with statuscode: 500",
  }, "upstream DoHTTPProbe keeps the response body out of the failure text");
});

Deno.test("runProbe() httpGet: follows same-host redirects, stops with success at another host", async () => {
  const urls: string[] = [];
  const routes: Record<string, () => Response> = {
    "/old": () =>
      new Response(null, { status: 302, headers: { location: "/new" } }),
    "/new": () => new Response("down", { status: 503 }),
    "/away": () =>
      new Response(null, {
        status: 301,
        headers: { location: "http://elsewhere.test/x" },
      }),
  };
  const deps = netDeps({
    fetch: (input) => {
      urls.push(String(input));
      return Promise.resolve(routes[new URL(String(input)).pathname]!());
    },
  });
  const moved = await runProbe(
    { httpGet: { port: 80, path: "/old" } },
    target(),
    deps,
  );
  assert.equal(moved.result, "failure", "the redirect target decides");
  assert.deepEqual(urls, ["http://10.0.0.5:80/old", "http://10.0.0.5/new"]);
  const away = await runProbe(
    { httpGet: { port: 80, path: "/away" } },
    target(),
    deps,
  );
  assert.equal(away.result, "success");
  assert.match(away.output, /Probe terminated redirects/);
  assert.equal(urls.length, 3, "another host is not contacted");
});

Deno.test("runProbe() httpGet: a redirect not followed is success with upstream's ProbeWarning text, a followed one is not", async () => {
  // upstream DoHTTPProbe: a 3xx the client returns (another host, no Location) is
  // probe.Warning with "Probe terminated redirects, Response body: <body>"
  const found = '<a href="http://0.0.0.0/">Found</a>.\n\n';
  const routes: Record<string, () => Response> = {
    "/redirect": () =>
      new Response(found, {
        status: 302,
        headers: { location: "http://0.0.0.0/" },
      }),
    "/local": () =>
      new Response("", { status: 302, headers: { location: "/healthz" } }),
    "/healthz": () => new Response("ok", { status: 200 }),
    "/choices": () => new Response("cached", { status: 300 }),
  };
  const urls: string[] = [];
  const deps = netDeps({
    fetch: (input) => {
      urls.push(String(input));
      return Promise.resolve(routes[new URL(String(input)).pathname]!());
    },
  });
  const probe = (path: string) =>
    runProbe({ httpGet: { port: 8080, path } }, target(), deps);
  assert.deepEqual(await probe("/redirect?loc=http%3A%2F%2F0.0.0.0%2F"), {
    result: "success",
    output: `Probe terminated redirects, Response body: ${found}`,
    probeWarning: true,
  });
  assert.deepEqual(urls, [
    "http://10.0.0.5:8080/redirect?loc=http%3A%2F%2F0.0.0.0%2F",
  ]);
  const local = await probe("/local");
  assert.equal(local.result, "success");
  assert.equal(
    local.probeWarning,
    undefined,
    "a followed redirect is no warning",
  );
  assert.equal(urls.at(-1), "http://10.0.0.5:8080/healthz");
  assert.deepEqual(await probe("/choices"), {
    result: "success",
    output: "Probe terminated redirects, Response body: cached",
    probeWarning: true,
  });
});

Deno.test("runProbe() httpGet: explicit host, https scheme and the node address for host-network pods", async () => {
  const urls: string[] = [];
  const deps = netDeps({
    fetch: (input) => {
      urls.push(String(input));
      return Promise.resolve(new Response(null, { status: 204 }));
    },
  });
  await runProbe(
    {
      httpGet: { port: 443, host: "example.test", scheme: "HTTPS", path: "/x" },
    },
    target(),
    deps,
  );
  const hostNet = target({ status: { hostIP: "192.168.1.2" } });
  hostNet.pod.spec.hostNetwork = true;
  await runProbe({ httpGet: { port: 10248, path: "/healthz" } }, hostNet, deps);
  const noAddress = target({ status: {} });
  noAddress.pod.spec.hostNetwork = true;
  await runProbe({ httpGet: { port: 10248 } }, noAddress, deps);
  assert.deepEqual(urls, [
    "https://example.test:443/x",
    "http://192.168.1.2:10248/healthz",
    "http://127.0.0.1:10248/",
  ]);
  const noIp = await runProbe(
    { httpGet: { port: 80 } },
    target({ status: {} }),
    deps,
  );
  assert.equal(noIp.result, "unknown", "no pod IP yet is not a failure");
});

Deno.test("runProbe() httpGet: a missing permission is unknown with a warning, a TLS error a failure", async () => {
  const denied = await runProbe(
    { httpGet: { port: 8080 } },
    target(),
    netDeps({
      fetch: () =>
        Promise.reject(
          new Deno.errors.NotCapable(
            'Requires net access to "10.0.0.5:8080", run again with the --allow-net flag',
          ),
        ),
    }),
  );
  assert.equal(denied.result, "unknown");
  assert.match(denied.warning ?? "", /--allow-net=10\.0\.0\.5:8080/);
  const tls = await runProbe(
    { httpGet: { port: 8443, scheme: "HTTPS" } },
    target(),
    netDeps({
      fetch: () =>
        Promise.reject(
          new TypeError("error sending request", {
            cause: new Error("invalid peer certificate: UnknownIssuer"),
          }),
        ),
    }),
  );
  // certificates are not checked (upstream InsecureSkipVerify), so a TLS error is the
  // container's fault, as any other transport error
  assert.equal(tls.result, "failure");
  assert.equal(tls.warning, undefined);
});

Deno.test("runProbe() httpGet: no answer within timeoutSeconds is a failure", async () => {
  const deps = netDeps({
    fetch: (_input, init) =>
      new Promise((_, reject) => {
        init?.signal?.addEventListener("abort", () =>
          reject(init.signal!.reason));
      }),
  });
  let settled = false;
  const pending = runProbe(
    { httpGet: { port: 8080 }, timeoutSeconds: 2 },
    target(),
    deps,
  ).finally(() => settled = true);
  await deps.clock.advance(1999);
  assert.equal(settled, false);
  await deps.clock.advance(1);
  const outcome = await pending;
  assert.equal(outcome.result, "failure");
  assert.match(outcome.output, /timed out after 2s/);
  assert.equal(deps.clock.pendingSleeps, 0);
});

Deno.test("runProbe() httpGet: an unknown named port is unknown, not a failure", async () => {
  const outcome = await runProbe(
    { httpGet: { port: "metrics" } },
    target(),
    netDeps({ fetch: () => Promise.reject(new Error("unreachable")) }),
  );
  assert.equal(outcome.result, "unknown");
  assert.match(outcome.output, /no port with that name/);
});

Deno.test("runProbe() tcpSocket: connect succeeds, refused fails, timeout fails, no permission is unknown", async () => {
  const closed: string[] = [];
  const ok = await runProbe(
    { tcpSocket: { port: "http" } },
    target(),
    netDeps({
      connect: (o) =>
        Promise.resolve({
          close: () => void closed.push(`${o.hostname}:${o.port}`),
        }),
    }),
  );
  assert.equal(ok.result, "success");
  assert.deepEqual(closed, ["10.0.0.5:8080"]);
  const refused = await runProbe(
    { tcpSocket: { port: 81 } },
    target(),
    netDeps({
      connect: () =>
        Promise.reject(new Deno.errors.ConnectionRefused("Connection refused")),
    }),
  );
  assert.equal(refused.result, "failure");
  const denied = await runProbe(
    { tcpSocket: { port: 81 } },
    target(),
    netDeps({
      connect: () =>
        Promise.reject(
          new Deno.errors.NotCapable('Requires net access to "10.0.0.5:81"'),
        ),
    }),
  );
  assert.equal(denied.result, "unknown");
  assert.match(denied.warning ?? "", /--allow-net=10\.0\.0\.5:81/);
  assert.match(denied.warning ?? "", /--pod-cidr/);

  let release: (c: { close(): void }) => void = () => {};
  const deps = netDeps({
    connect: () => new Promise((resolve) => release = resolve),
  });
  const pending = runProbe({ tcpSocket: { port: 82 } }, target(), deps);
  await deps.clock.advance(1000);
  assert.equal((await pending).result, "failure");
  release({ close: () => void closed.push("late") });
  await Promise.resolve();
  assert.deepEqual(closed, ["10.0.0.5:8080", "late"], "late connection closed");
});

Deno.test("resolveProbePort() takes numbers and numeric strings, resolves names", () => {
  assert.equal(resolveProbePort(81, container), 81);
  assert.equal(resolveProbePort("82", container), 82);
  assert.equal(resolveProbePort("http", container), 8080);
  assert.throws(() => resolveProbePort("nope", container), RangeError);
});

Deno.test("runProbe() httpGet and tcpSocket reach a real server on the loopback", async () => {
  let status = 200;
  await using server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      onListen: () => {},
    },
    (request) =>
      new URL(request.url).pathname === "/redirect"
        ? new Response('<a href="http://0.0.0.0/">Found</a>.\n\n', {
          status: 302,
          headers: { location: "http://0.0.0.0/" },
        })
        : new Response("ok", { status }),
  );
  const loopback = target({ status: { podIP: "127.0.0.1" } });
  const port = server.addr.port;
  const deps = netDeps({});
  assert.equal(
    (await runProbe({ httpGet: { port, path: "/healthz" } }, loopback, deps))
      .result,
    "success",
  );
  const away = await runProbe(
    { httpGet: { port, path: "/redirect" } },
    loopback,
    deps,
  );
  assert.equal(away.probeWarning, true, "the 3xx itself reaches the prober");
  assert.equal(
    away.output,
    'Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.\n\n',
  );
  status = 503;
  assert.equal(
    (await runProbe({ httpGet: { port } }, loopback, deps)).result,
    "failure",
  );
  assert.equal(
    (await runProbe({ tcpSocket: { port } }, loopback, deps)).result,
    "success",
  );
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const free = (closed.addr as Deno.NetAddr).port;
  closed.close();
  assert.equal(
    (await runProbe({ tcpSocket: { port: free } }, loopback, deps)).result,
    "failure",
    "connection refused",
  );
  assert.equal(
    (await runProbe({ httpGet: { port: free } }, loopback, deps)).result,
    "failure",
    "connection refused",
  );
});

Deno.test("runProbe() httpGet: 400 and above fail, 399 still succeeds", async () => {
  // upstream DoHTTPProbe: success is 200 <= status < 400
  let status = 200;
  const deps = netDeps({
    fetch: () => Promise.resolve(new Response("bad", { status })),
  });
  const probe: Probe = { httpGet: { path: "/healthz", port: 8080 } };
  const results: Record<number, string> = {};
  for (status of [399, 400, 404]) {
    results[status] = (await runProbe(probe, target(), deps)).result;
  }
  assert.deepEqual(results, {
    399: "success",
    400: "failure",
    404: "failure",
  });
  status = 400;
  assert.deepEqual(await runProbe(probe, target(), deps), {
    result: "failure",
    output: "HTTP probe failed with statuscode: 400",
  });
});
