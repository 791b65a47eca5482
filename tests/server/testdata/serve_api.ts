/**
 * Child process of api_planned_permissions_test.ts: serves the kubelet API from the
 * configuration in argv[0] (JSON) until stdin closes, printing "listening <port>" once bound.
 * argv[1], when given, is the streaming URL every exec is sent to.
 */
import { systemClock } from "../../../src/clock/mod.ts";
import { createLogger } from "../../../src/log/mod.ts";
import { runApiServer } from "../../../src/server/mod.ts";

const config = JSON.parse(Deno.args[0] ?? "{}");
const streamUrl = Deno.args[1];
const ac = new AbortController();
const done = runApiServer({
  clock: systemClock,
  logger: createLogger(),
  syncLoop: { latestLoopEntryTime: () => undefined },
  resyncIntervalMs: 60_000,
  nodeName: "node-a",
  pods: () => [],
  runningPods: () => Promise.resolve([]),
  config: () => ({}),
  runtimeCounts: () => Promise.resolve({ runningPods: 0, containers: {} }),
  nodeLogs: { logDir: () => "/var/log" },
  ...(streamUrl
    ? {
      streaming: {
        exec: () => Promise.resolve(streamUrl),
        attach: () => Promise.resolve(streamUrl),
        portForward: () => Promise.resolve(streamUrl),
        run: () => Promise.resolve(new Uint8Array()),
      },
    }
    : {}),
}, {
  config,
  signal: ac.signal,
  hostname: "node-a",
  // deno-lint-ignore no-console
  onListen: (addr) => console.log(`listening ${addr.port}`),
});
for await (const _ of Deno.stdin.readable) { /* wait for EOF */ }
ac.abort();
await done;
