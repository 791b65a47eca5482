/**
 * Where kubelet.ts's CPU goes with N running pods: starts it alone on real containerd behind
 * the recording CRI proxy (tests/diff/_sides.ts) with the V8 inspector open, starts N static
 * pods, waits for the steady state, records a CPU profile over the inspector protocol and
 * prints the self time by function and by file, the JS heap (`Deno.memoryUsage()`), the RSS
 * and the CRI calls per second of the window. The raw profile is written for Chrome's
 * DevTools (`--out=<file>.cpuprofile`).
 *
 * Needs root, `bash scripts/peers.sh build` and the test images of scripts/cri_env.sh.
 * Run: `deno run -A bench/profile_kubelet.ts [--pods=110] [--seconds=30] [--out=FILE]`.
 * `--attach=HOST:PORT` profiles a kubelet already running with its inspector there instead
 * (e.g. the cluster bench's under churn, `KTS_BENCH_INSPECT`), without the CRI call counts.
 *
 * @module
 */
// deno-lint-ignore-file no-console

import { startSide } from "../tests/diff/_sides.ts";
import { peersBin, usage } from "./_peers.ts";
import { callsByMethod, sleeper, waitStarted } from "./_pod_starts.ts";

const arg = (name: string) =>
  Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const PODS = Number(arg("pods") ?? 110);
const SECONDS = Number(arg("seconds") ?? 30);
const OUT = arg("out");
// --usage-only: no inspector and no profile, only CPU, RSS and CRI calls (e.g. to compare
// V8 flags given in KTS_KUBELET_V8_FLAGS without the inspector's own memory).
const USAGE_ONLY = Deno.args.includes("--usage-only");
const ATTACH = arg("attach");
const PORT = 9339;
const NODE = "profile-node";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** A minimal Chrome DevTools protocol session over the inspector's WebSocket. */
async function inspector(address: string) {
  let list: { webSocketDebuggerUrl: string }[] = [];
  for (let i = 0; i < 100 && !list.length; i++) {
    list = await fetch(`http://${address}/json/list`).then((r) => r.json())
      .catch(() => []);
    if (!list.length) await new Promise((r) => setTimeout(r, 200));
  }
  if (!list[0]) throw new Error(`no inspector at ${address}`);
  const ws = new WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    waiting.get(message.id)?.(message.result);
    waiting.delete(message.id);
  };
  return {
    send<T>(method: string, params: unknown = {}): Promise<T> {
      const id = next++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) =>
        waiting.set(id, resolve as (r: unknown) => void)
      );
    },
    close: () => ws.close(),
  };
}

function top(counts: Map<string, number>, total: number, n: number): string {
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) =>
    `  ${(100 * v / total).toFixed(1).padStart(5)} %  ${k}`
  ).join("\n");
}

const bin = Deno.uid() === 0 ? await peersBin() : undefined;
if (!bin) {
  console.log("skipped: needs root and the peer binaries");
  Deno.exit(0);
}
if (!USAGE_ONLY && !ATTACH) {
  Deno.env.set("KTS_KUBELET_DENO_ARGS", `--inspect=127.0.0.1:${PORT}`);
}
await using side = ATTACH ? undefined : await startPods();
const session = USAGE_ONLY
  ? undefined
  : await inspector(ATTACH ?? `127.0.0.1:${PORT}`);
const pid = side ? (await side.kubelet()).pid : Number(
  (await session!.send<{ result: { value: number } }>("Runtime.evaluate", {
    expression: "Deno.pid",
  })).result.value,
);
await session?.send("Profiler.enable");
await session?.send("Profiler.setSamplingInterval", { interval: 500 });
const before = await usage(pid);
const from = Date.now();
await session?.send("Profiler.start");
await new Promise((r) => setTimeout(r, SECONDS * 1000));
const { profile } = await session?.send<
  { profile: { nodes: ProfileNode[] } }
>("Profiler.stop") ?? { profile: { nodes: [] } };
const to = Date.now();
const after = await usage(pid);
const memory = await session?.send<{ result: { value: string } }>(
  "Runtime.evaluate",
  { expression: "JSON.stringify(Deno.memoryUsage())" },
);
session?.close();
if (OUT) await Deno.writeTextFile(OUT, JSON.stringify(profile));

const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
let idle = 0;
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  total += hits;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === "(idle)") idle += hits;
  const file = url.replace(/^.*\/(src|node_modules|ext)\//, "$1/") ||
    "(native)";
  const fn = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  byFile.set(file, (byFile.get(file) ?? 0) + hits);
}
/** Resident KiB by kind of mapping: the executable's pages, glibc's main arena, other anonymous memory. */
async function residentByKind(pid: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  let kind = "";
  for (
    const line of (await Deno.readTextFile(`/proc/${pid}/smaps`)).split("\n")
  ) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[1] ?? "";
      kind = name === ""
        ? "anonymous"
        : name.startsWith("/")
        ? (name.includes("/deno") ? "executable" : "other files")
        : name;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] = (out[kind] ?? 0) + Number(rss[1]);
  }
  return out;
}
const resident = await residentByKind(pid);

const calls = side ? callsByMethod(await side.trace(), from, to) : new Map();
const seconds = (to - from) / 1000;
console.log(
  `${ATTACH ? `kubelet at ${ATTACH}` : `${PODS} pods`}, ${
    seconds.toFixed(0)
  } s: CPU ${((after.cpu - before.cpu) / seconds).toFixed(4)} cores, RSS ${
    after.rssMiB.toFixed(0)
  } MiB, not idle ${
    (100 * (total - idle) / total).toFixed(1)
  } % of ${total} samples; memory ${memory?.result.value}; load ${
    (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ")
  }`,
);
console.log(
  `resident MiB: ${
    Object.entries(resident).filter(([, kib]) => kib >= 512).sort((a, b) =>
      b[1] - a[1]
    ).map(([k, kib]) => `${k} ${(kib / 1024).toFixed(1)}`).join(", ")
  }`,
);
console.log(
  `CRI calls/s: ${
    [...calls].sort((a, b) => b[1] - a[1]).map(([m, n]) =>
      `${m} ${(n / seconds).toFixed(1)}`
    ).join(", ")
  }`,
);
byFunction.delete(`(idle) (native):0`);
byFile.delete("(native)");
console.log("self time by function (share of all samples):");
console.log(top(byFunction, total, 40));
console.log("self time by file:");
console.log(top(byFile, total, 25));

/** Our kubelet alone on its containerd with PODS static pods, in the steady state. */
async function startPods() {
  const manifests: Record<string, unknown> = {};
  for (let i = 0; i < PODS; i++) manifests[`p${i}.yaml`] = sleeper(`p${i}`);
  const started = await startSide({
    kind: "ours",
    node: NODE,
    bin: bin!,
    bridge: "ktsb0",
    subnet: "10.84.0.0/16",
    manifests,
  });
  const keys = Array.from(
    { length: PODS },
    (_, i) => `default/p${i}-${NODE}`,
  );
  await waitStarted(started, keys, 900_000);
  // let the first syncs, status writes and the GC settle
  await new Promise((r) => setTimeout(r, 20_000));
  return started;
}
