import assert from "node:assert/strict";
import { HttpError } from "../http_error.ts";
import { upgradeTarget } from "../upgrade.ts";
import {
  execRoute,
  parseContainerTarget,
  parseForwardPorts,
  parsePodTarget,
  parseStreamOptions,
  portForwardRoute,
  runRoute,
  type StreamingHost,
} from "./streaming.ts";

function status(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof HttpError) return error.status;
    throw error;
  }
  return undefined;
}

Deno.test("container and pod targets come from the path, with or without a UID", () => {
  assert.deepEqual(parseContainerTarget("ns/web/app"), {
    namespace: "ns",
    pod: "web",
    container: "app",
  });
  assert.deepEqual(parseContainerTarget("ns/web/u-1/app"), {
    namespace: "ns",
    pod: "web",
    uid: "u-1",
    container: "app",
  });
  assert.equal(status(() => parseContainerTarget("ns/web")), 404);
  assert.equal(status(() => parseContainerTarget("ns/web/a/b/c")), 404);
  assert.equal(status(() => parseContainerTarget("ns/web/")), 404);
  assert.deepEqual(parsePodTarget("ns/web"), { namespace: "ns", pod: "web" });
  assert.deepEqual(parsePodTarget("ns/web/u"), {
    namespace: "ns",
    pod: "web",
    uid: "u",
  });
  assert.equal(status(() => parsePodTarget("ns")), 404);
});

Deno.test("stream options: only 1 turns a stream on, a TTY has no stderr, one is needed", () => {
  assert.deepEqual(
    parseStreamOptions(new URLSearchParams("input=1&output=1&error=1")),
    { stdin: true, stdout: true, stderr: true, tty: false },
  );
  assert.deepEqual(
    parseStreamOptions(new URLSearchParams("output=1&error=1&tty=1")),
    { stdin: false, stdout: true, stderr: false, tty: true },
  );
  assert.equal(
    status(() =>
      parseStreamOptions(new URLSearchParams("output=true&stdout=1"))
    ),
    400,
  );
});

Deno.test("port-forward ports: WebSocket clients name them, each 1-65535", () => {
  const q = (s: string) => new URLSearchParams(s);
  assert.deepEqual(parseForwardPorts(q("port=80&port=81,82"), true), [
    80,
    81,
    82,
  ]);
  assert.deepEqual(parseForwardPorts(q(""), false), []);
  assert.equal(status(() => parseForwardPorts(q(""), true)), 400);
  assert.equal(status(() => parseForwardPorts(q("port="), true)), 400);
  assert.equal(status(() => parseForwardPorts(q("port=0"), true)), 400);
  assert.equal(status(() => parseForwardPorts(q("port=70000"), true)), 400);
  assert.equal(status(() => parseForwardPorts(q("port=8a"), true)), 400);
});

function fakeHost(calls: unknown[]): StreamingHost {
  return {
    exec: (target, command, options) => {
      calls.push(["exec", target, command, options]);
      return Promise.resolve("http://127.0.0.1:3000/exec/tok");
    },
    attach: () => Promise.resolve("http://127.0.0.1:3000/attach/tok"),
    portForward: (target, ports) => {
      calls.push(["portForward", target, ports]);
      return Promise.resolve("http://127.0.0.1:3000/portforward/tok");
    },
    run: (target, command) => {
      calls.push(["run", target, command]);
      return Promise.resolve(new TextEncoder().encode("out\n"));
    },
  };
}

const UPGRADE = { connection: "Upgrade", upgrade: "SPDY/3.1" };

Deno.test("exec asks the runtime only for upgrade requests and answers with its URL", async () => {
  const calls: unknown[] = [];
  const route = execRoute(fakeHost(calls), "/exec/");
  const url = new URL(
    "https://node/exec/ns/web/app?command=sh&command=-c&command=ls&output=1",
  );
  await assert.rejects(
    () => route(new Request(url), url),
    (e: HttpError) =>
      e.status === 400 && /Upgrade request required/.test(e.message),
  );
  assert.deepEqual(calls, []);
  const response = await route(new Request(url, { headers: UPGRADE }), url);
  assert.equal(upgradeTarget(response)?.href, "http://127.0.0.1:3000/exec/tok");
  assert.deepEqual(calls, [[
    "exec",
    { namespace: "ns", pod: "web", container: "app" },
    ["sh", "-c", "ls"],
    { stdin: false, stdout: true, stderr: false, tty: false },
  ]]);
});

Deno.test("port-forward reads the ports of a WebSocket request", async () => {
  const calls: unknown[] = [];
  const route = portForwardRoute(fakeHost(calls), "/portForward/");
  const url = new URL("https://node/portForward/ns/web/uid-1?port=8080");
  await route(
    new Request(url, {
      headers: { connection: "Upgrade", upgrade: "websocket" },
    }),
    url,
  );
  assert.deepEqual(calls, [[
    "portForward",
    { namespace: "ns", pod: "web", uid: "uid-1" },
    [8080],
  ]]);
});

Deno.test("run splits cmd on spaces and answers with the output", async () => {
  const calls: unknown[] = [];
  const route = runRoute(fakeHost(calls), "/run/");
  const url = new URL("https://node/run/ns/web/app?cmd=echo%20a%20b");
  const response = await route(new Request(url, { method: "POST" }), url);
  assert.equal(await response.text(), "out\n");
  assert.deepEqual(calls, [[
    "run",
    { namespace: "ns", pod: "web", container: "app" },
    ["echo", "a", "b"],
  ]]);
});
