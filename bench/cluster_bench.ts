/**
 * kubelet.ts against the upstream kubelet, both joined to the local control plane
 * (scripts/cluster_env.sh) in one run, each on its own runtime-only containerd
 * (scripts/cri_env.sh second instance for ours, scripts/upstream_kubelet.sh for upstream) and
 * under its own node name. Everything is observed through the API server, as a user sees it.
 *
 * 1. start → Node Ready: kubelet process started → the Node's Ready condition True, 3
 *    repeats per kubelet (the Node is deleted in between; the first repeat includes the TLS
 *    bootstrap, later ones reuse the certificate), p50.
 * 2. pod created → Running: POST of a pod with spec.nodeName → phase Running, 20 pods one at
 *    a time, the kubelets taking turns; p50.
 * 3. steady state at 110 pods (maxPods): the kubelet process's RSS (mean of samples) and CPU
 *    (cores) from /proc over 60 s, both kubelets at the same time.
 * 4. kubelet API: requests/s of /healthz and /pods (110 pods) from bench/_kubelet_load.ts on
 *    loopback with the API server's kubelet client certificate, and `kubectl exec -- true`
 *    round trip p50 through the API server.
 * 5. status to the API: the container's start as the runtime stamped it → the bench's watch
 *    sees the pod Ready in the API server, for the pods started in 2., p50.
 * 6. churn: one kubelet at a time on its emptied node keeps 100 pods coming and going for
 *    5 minutes (a pod is deleted once the watch sees it Ready, and a new one is created for
 *    each pod gone); pods/s that went Ready and were gone, and the kubelet's CPU.
 *
 * kubelet.ts runs as the bundle of scripts/bundle.ts (what `deno task compile` ships, without
 * denort here) with the shipped V8 flags (scripts/v8_flags.ts); `--main`: `deno run main.ts`.
 * Needs root, the peer binaries (`bash scripts/peers.sh build`), the control plane
 * (`bash scripts/cluster_env.sh up`, env from /tmp/cluster.env) and the test images of
 * scripts/cri_env.sh. Run:
 * `deno run -A bench/cluster_bench.ts [--quick] [--main] [--api | --churn]` (`--quick`: 1 start,
 * 5 pods, 20 steady pods, 15 s, 10 pods churned for 30 s; `--api`: only the kubelet API part,
 * after one start each and the pods filled to 110; `--churn`: only the churn, after one start
 * each).
 *
 * @module
 */
// deno-lint-ignore-file no-console

import {
  ApiStatusError,
  createRestClient,
  loadKubeconfig,
} from "../src/api/mod.ts";
import { systemClock } from "../src/clock/mod.ts";
import { KUBELET_V8_FLAGS } from "../scripts/v8_flags.ts";
import { bundleInto } from "../tests/ship/_helpers.ts";
import { stopChild } from "../tests/diff/_sides.ts";
import { deleteNode, run } from "../tests/cluster/_cluster.ts";
import { machineCpu, peersBin, percentile, usage } from "./_peers.ts";
import { PodWatch } from "./_pod_watch.ts";

const QUICK = Deno.args.includes("--quick");
const FROM_SOURCE = Deno.args.includes("--main");
const API_ONLY = Deno.args.includes("--api");
const CHURN_ONLY = Deno.args.includes("--churn");
const REPEATS = QUICK || API_ONLY || CHURN_ONLY ? 1 : 3;
const STARTS = API_ONLY || CHURN_ONLY ? 0 : QUICK ? 5 : 20;
const STEADY = QUICK ? 20 : 110;
const SAMPLE_MS = QUICK ? 15_000 : 60_000;
const LOAD_SECONDS = QUICK ? 2 : 5;
/** `host:port` for the V8 inspector of our kubelet (profiling it under the bench's load). */
const INSPECT = Deno.env.get("KTS_BENCH_INSPECT");
/** Load rounds per path, the kubelets taking turns (the machine's load moves in between). */
const LOAD_ROUNDS = QUICK ? 1 : 3;
const LOAD_CONCURRENCY = 8;
const EXECS = QUICK ? 3 : 10;
const CHURN_SECONDS = QUICK ? 30 : 300;
const CHURN_PODS = QUICK ? 10 : 100;
/** Creates and deletes in flight per kubelet during the churn. */
const CHURN_REQUESTS = 20;
const ROOT = new URL("..", import.meta.url).pathname;
const NAMESPACE = "kts-cluster-bench";
const PAUSE = Deno.env.get("KUBELET_TS_CRI_PAUSE_IMAGE") ??
  "kts.local/pause:3.9";
const BUSYBOX = Deno.env.get("KUBELET_TS_CRI_IMAGE") ??
  "kts.local/busybox:latest";

type Kind = "ours" | "upstream";
const KINDS = ["ours", "upstream"] as const;

/** Each kubelet's node, directories, network and ports, apart from every other user's. */
const SIDES = {
  ours: {
    node: "kts-cbench-ours",
    root: "/tmp/kts-cbench-ours",
    bridge: "ktscb0",
    subnet: "10.86.0.0/16",
    port: 10660,
  },
  upstream: {
    node: "kts-cbench-up",
    root: "/tmp/kts-cbench-up",
    bridge: "ktscb1",
    subnet: "10.87.0.0/16",
    port: 10662,
    healthzPort: 10661,
  },
};

const env = {
  kubeconfig: Deno.env.get("KUBELET_TS_KUBECONFIG") ?? "",
  bootstrap: Deno.env.get("KUBELET_TS_BOOTSTRAP_KUBECONFIG") ?? "",
  ca: Deno.env.get("KUBELET_TS_CLUSTER_CA") ?? "",
  k8sBin: Deno.env.get("KUBELET_TS_K8S_BIN") ?? "",
  clientCert: Deno.env.get("KUBELET_TS_APISERVER_KUBELET_CLIENT_CERT") ?? "",
  clientKey: Deno.env.get("KUBELET_TS_APISERVER_KUBELET_CLIENT_KEY") ?? "",
};
const found = Deno.uid() === 0 ? await peersBin() : undefined;
if (found === undefined || Object.values(env).some((v) => v === "")) {
  console.log(
    "skipped: needs root, the peer binaries (bash scripts/peers.sh build, used by " +
      "scripts/upstream_kubelet.sh) and the control plane (set -a; . /tmp/cluster.env after " +
      "bash scripts/cluster_env.sh up)",
  );
  Deno.exit(0);
}
const bin = found;
const api = createRestClient(
  { clock: systemClock },
  await loadKubeconfig(env.kubeconfig),
  { qps: 0 },
);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a command; its stdout, or an error with its stderr when it fails. */
async function sh(
  cmd: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<string> {
  const out = await run(cmd, args, extraEnv);
  if (out.code !== 0) {
    throw new Error(
      `${cmd} ${args.join(" ")} failed (${out.code}):\n${out.stderr}`,
    );
  }
  return out.stdout;
}

const kubectl = (...args: string[]) =>
  sh(`${env.k8sBin}/kubectl`, ["--kubeconfig", env.kubeconfig, ...args]);

async function getOrUndefined<T>(path: string): Promise<T | undefined> {
  try {
    return await api.request<T>({ method: "GET", path });
  } catch (e) {
    if (e instanceof ApiStatusError && e.code === 404) return undefined;
    throw e;
  }
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(intervalMs);
  }
}

interface Conditioned {
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
  };
}

const nodeReady = (node: string) =>
  until(`Node ${node} Ready`, async () => {
    const n = await getOrUndefined<Conditioned>(`/api/v1/nodes/${node}`);
    return n?.status?.conditions?.some((c) =>
        c.type === "Ready" && c.status === "True"
      )
      ? Date.now()
      : undefined;
  }, 180_000);

// --- the two kubelets --------------------------------------------------------------------

const ours = SIDES.ours;
const oursCriEnv = {
  KTS_CRI_ROOT: `${ours.root}/cri`,
  KTS_CRI_RUNTIME_ONLY: "1",
  KTS_CRI_BRIDGE: ours.bridge,
  KTS_CRI_SUBNET: ours.subnet,
};
const up = SIDES.upstream;
const upstreamEnv = {
  KTS_UPSTREAM_ROOT: up.root,
  KTS_UPSTREAM_NODE: up.node,
  KTS_UPSTREAM_BRIDGE: up.bridge,
  KTS_UPSTREAM_SUBNET: up.subnet,
  KTS_UPSTREAM_HEALTHZ_PORT: String(up.healthzPort),
  KTS_UPSTREAM_PORT: String(up.port),
  KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG: env.bootstrap,
  KUBELET_TS_CLUSTER_CA: env.ca,
  KTS_UPSTREAM_CONFIG_EXTRA: `podLogsDir: ${up.root}/pod-logs`,
  // the API server dials the node's InternalIP, so listen beyond loopback (flags win
  // over the script's config file)
  KTS_UPSTREAM_ARGS: "--address=0.0.0.0",
};

function ourConfig(): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    `containerRuntimeEndpoint: unix://${ours.root}/cri/containerd.sock`,
    `cgroupRoot: /${ours.node}`,
    `podLogsDir: ${ours.root}/pod-logs`,
    "healthzPort: 0",
    "address: 0.0.0.0",
    `port: ${ours.port}`,
    "authentication:",
    "  anonymous:",
    "    enabled: false",
    "  webhook:",
    "    enabled: true",
    "  x509:",
    `    clientCAFile: ${env.ca}`,
    "authorization:",
    "  mode: Webhook",
    "",
  ].join("\n");
}

let ourKubelet: Deno.ChildProcess | undefined;
let ourProgram = `${ROOT}main.ts`;

/** Starts a kubelet; returns its pid and the epoch ms its process was started. */
async function startKubelet(
  kind: Kind,
): Promise<{ pid: number; startedAt: number }> {
  if (kind === "ours") {
    const log = await Deno.open(`${ours.root}/kubelet.log`, {
      append: true,
      create: true,
    });
    const startedAt = Date.now();
    ourKubelet = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--v8-flags=${KUBELET_V8_FLAGS}`,
        ...(INSPECT ? [`--inspect=${INSPECT}`] : []),
        ourProgram,
        "--config",
        `${ours.root}/config.yaml`,
        `--root-dir=${ours.root}/kubelet`,
        `--cert-dir=${ours.root}/pki`,
        `--kubeconfig=${ours.root}/kubelet.conf`,
        `--bootstrap-kubeconfig=${env.bootstrap}`,
        `--hostname-override=${ours.node}`,
      ],
      cwd: ROOT,
      env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    // its log lines, kept out of the bench's output
    ourKubelet.stderr.pipeTo(log.writable).catch(() => {});
    return { pid: ourKubelet.pid, startedAt };
  }
  await sh("bash", [`${ROOT}scripts/upstream_kubelet.sh`, "up"], upstreamEnv);
  const pid = Number(await Deno.readTextFile(`${up.root}/kubelet.pid`));
  const started = await Deno.readTextFile(`${up.root}/kubelet.started`);
  return { pid, startedAt: Math.round(Number(started) * 1000) };
}

async function stopKubelet(kind: Kind): Promise<void> {
  if (kind === "ours") {
    if (!ourKubelet) return;
    const child = ourKubelet;
    ourKubelet = undefined;
    await stopChild(child, "SIGTERM");
    return;
  }
  await sh(
    "bash",
    [`${ROOT}scripts/upstream_kubelet.sh`, "stop-kubelet"],
    upstreamEnv,
  );
}

async function teardown(): Promise<void> {
  await kubectl(
    "-n",
    NAMESPACE,
    "delete",
    "pods",
    "--all",
    "--grace-period=0",
    "--force",
    "--wait=false",
  ).catch(() => {});
  await stopKubelet("ours").catch(() => {});
  await sh(`${bin}/crictl`, [
    "--runtime-endpoint",
    `unix://${ours.root}/cri/containerd.sock`,
    "rmp",
    "--all",
    "--force",
  ]).catch(() => {});
  await sh("bash", [`${ROOT}scripts/cri_env.sh`, "down"], oursCriEnv).catch(
    () => {},
  );
  // anything left under our cgroup root, then its directories, deepest first
  await sh("bash", [
    "-c",
    `cat $(find /sys/fs/cgroup/pids/${ours.node} -name tasks 2>/dev/null) 2>/dev/null | xargs -r kill -9 2>/dev/null; sleep 0.5; ` +
    `find /sys/fs/cgroup -depth -type d -path '*/${ours.node}*' -exec rmdir {} \\; 2>/dev/null; true`,
  ]).catch(() => {});
  await sh("bash", [
    "-c",
    `umount $(awk '$2 ~ "^${ours.root}" {print $2}' /proc/self/mounts | sort -r) 2>/dev/null; rm -rf --one-file-system ${ours.root}`,
  ]).catch(() => {});
  await sh("bash", [`${ROOT}scripts/upstream_kubelet.sh`, "down"], upstreamEnv)
    .catch(
      () => {},
    );
  await kubectl(
    "delete",
    "namespace",
    NAMESPACE,
    "--ignore-not-found",
    "--wait=false",
  )
    .catch(() => {});
  for (const k of KINDS) await deleteNode(SIDES[k].node).catch(() => {});
}

// --- pods --------------------------------------------------------------------------------

function podSpec(name: string, node: string, image: string) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NAMESPACE },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 1,
      containers: [{
        name: "app",
        image,
        imagePullPolicy: "IfNotPresent",
        ...(image === BUSYBOX
          ? { command: ["sh", "-c", "trap 'exit 0' TERM; sleep 36000 & wait"] }
          : {}),
      }],
    },
  };
}

const createPod = (name: string, node: string, image = PAUSE) =>
  api.request({
    method: "POST",
    path: `/api/v1/namespaces/${NAMESPACE}/pods`,
    body: podSpec(name, node, image),
  });

const podRunning = (name: string, timeoutMs = 120_000) =>
  until(`pod ${name} Running`, async () => {
    const p = await getOrUndefined<Conditioned>(
      `/api/v1/namespaces/${NAMESPACE}/pods/${name}`,
    );
    return p?.status?.phase === "Running" ? Date.now() : undefined;
  }, timeoutMs);

/** The bench's pods bound to `node`. */
async function podsOn(node: string): Promise<Conditioned[]> {
  const list = await api.request<{ items: Conditioned[] }>({
    method: "GET",
    path: `/api/v1/namespaces/${NAMESPACE}/pods?fieldSelector=${
      encodeURIComponent(`spec.nodeName=${node}`)
    }`,
  });
  return list.items;
}

async function runningOn(node: string): Promise<number> {
  return (await podsOn(node)).filter((p) => p.status?.phase === "Running")
    .length;
}

const deletePod = (name: string) =>
  api.request({
    method: "DELETE",
    path: `/api/v1/namespaces/${NAMESPACE}/pods/${name}`,
  });

/** Epoch ms at which the runtime started the pod's first container (CRI `startedAt`). */
async function containerStartedAt(kind: Kind, pod: string): Promise<number> {
  const p = await api.request<
    { status?: { containerStatuses?: { containerID?: string }[] } }
  >({ method: "GET", path: `/api/v1/namespaces/${NAMESPACE}/pods/${pod}` });
  const id = p.status?.containerStatuses?.[0]?.containerID?.replace(
    /^[a-z]+:\/\//,
    "",
  );
  if (!id) throw new Error(`pod ${pod} has no container ID in its status`);
  const out = await sh(`${bin}/crictl`, [
    "--runtime-endpoint",
    `unix://${SIDES[kind].root}/cri/containerd.sock`,
    "inspect",
    "--output",
    "json",
    id,
  ]);
  const startedAt = (JSON.parse(out) as { status: { startedAt: string } })
    .status.startedAt;
  // RFC 3339 with nanoseconds; Date.parse takes milliseconds
  const ms = Date.parse(startedAt.replace(/(\.\d{3})\d*/, "$1"));
  if (Number.isNaN(ms)) throw new Error(`startedAt ${startedAt} of ${id}`);
  return ms;
}

interface Churned {
  podsPerSecond: number;
  cores: number;
  created: number;
  completed: number;
  readyLeft: number;
  errors: number;
}

/**
 * Keeps CHURN_PODS pods of `kind` coming and going for CHURN_SECONDS: each pod is deleted
 * once the watch sees it Ready, and each pod gone is replaced. Returns the pods that went
 * through (Ready, then gone) per second and the kubelet's CPU in cores.
 */
async function churn(
  kind: Kind,
  pid: number,
  watch: PodWatch,
): Promise<Churned> {
  const node = SIDES[kind].node;
  const alive = new Set<string>();
  const deleting = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  let completed = 0;
  let errors = 0;
  const track = (p: Promise<unknown>, onError: () => void) => {
    const done: Promise<void> = p.then(() => {}, () => {
      errors++;
      onError();
    }).finally(() => inFlight.delete(done));
    inFlight.add(done);
  };
  const cpu0 = (await usage(pid)).cpu;
  const t0 = performance.now();
  while (performance.now() - t0 < CHURN_SECONDS * 1000) {
    for (const name of alive) {
      const t = watch.times.get(name);
      if (t?.deletedAt !== undefined) {
        alive.delete(name);
        if (t.readyAt !== undefined) completed++;
      } else if (t?.readyAt !== undefined && !deleting.has(name)) {
        deleting.add(name);
        track(deletePod(name), () => deleting.delete(name));
      }
    }
    while (alive.size < CHURN_PODS && inFlight.size < CHURN_REQUESTS) {
      const name = `churn-${kind}-${next++}`;
      alive.add(name);
      track(createPod(name, node), () => alive.delete(name));
    }
    await sleep(100);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cores = ((await usage(pid)).cpu - cpu0) / seconds;
  await Promise.all(inFlight);
  const ready = [...alive].filter((n) => watch.times.get(n)?.readyAt).length;
  return {
    podsPerSecond: completed / seconds,
    cores,
    created: next,
    completed,
    readyLeft: ready,
    errors,
  };
}

/**
 * Sends `load` to a kubelet's API; returns requests/s answered 200 and the kubelet's CPU time
 * per answer (steadier than requests/s on a busy machine).
 */
async function load(
  port: number,
  path: string,
  pid: number,
): Promise<{ rps: number; cpuMs: number }> {
  const cpu0 = (await usage(pid)).cpu;
  const out = await sh(Deno.execPath(), [
    "run",
    "-A",
    "--unsafely-ignore-certificate-errors=127.0.0.1",
    `${ROOT}bench/_kubelet_load.ts`,
    `https://127.0.0.1:${port}${path}`,
    String(LOAD_SECONDS),
    String(LOAD_CONCURRENCY),
    env.clientCert,
    env.clientKey,
  ], { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" });
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as {
    ok: number;
    failed: number;
    seconds: number;
  };
  if (r.ok === 0) throw new Error(`no answer from :${port}${path}: ${out}`);
  const cpuMs = ((await usage(pid)).cpu - cpu0) * 1000 / r.ok;
  return { rps: r.ok / r.seconds, cpuMs };
}

// --- the run -----------------------------------------------------------------------------

interface Row {
  metric: string;
  ours: number;
  upstream: number;
  unit: string;
  target: string;
}
const rows: Row[] = [];
const byKind = () => ({ ours: [] as number[], upstream: [] as number[] });
const p50 = (v: number[]) => percentile(v, 50);

await teardown();
let watch: PodWatch | undefined;
try {
  await Deno.mkdir(`${ours.root}/pod-logs`, { recursive: true });
  await Deno.mkdir(`${up.root}/pod-logs`, { recursive: true });
  await Deno.writeTextFile(`${ours.root}/config.yaml`, ourConfig());
  await sh("bash", [`${ROOT}scripts/cri_env.sh`, "up"], oursCriEnv);
  if (!FROM_SOURCE) ourProgram = await bundleInto(ours.root);
  await until(
    `namespace ${NAMESPACE} gone`,
    async () =>
      await getOrUndefined(`/api/v1/namespaces/${NAMESPACE}`) === undefined
        ? true
        : undefined,
    120_000,
    500,
  );
  await kubectl("create", "namespace", NAMESPACE);
  watch = new PodWatch(api, NAMESPACE);
  await watch.start();

  // 1. start → Node Ready
  const ready = byKind();
  for (let i = 0; i < REPEATS; i++) {
    for (const kind of KINDS) {
      const node = SIDES[kind].node;
      const seen = nodeReady(node);
      const { startedAt } = await startKubelet(kind);
      ready[kind].push((await seen) - startedAt);
      if (i < REPEATS - 1) {
        await stopKubelet(kind);
        await deleteNode(node);
      }
    }
  }
  rows.push({
    metric: `start → Node Ready p50 (${REPEATS})`,
    ours: p50(ready.ours),
    upstream: p50(ready.upstream),
    unit: "ms",
    target: "≤ 1.0",
  });
  console.log(`Node Ready ms: ${JSON.stringify(ready)}`);

  // 2. pod created → Running, one at a time, taking turns
  const running = byKind();
  const toApi = byKind();
  const keep = (row: Row) => API_ONLY || CHURN_ONLY || rows.push(row);
  for (let i = 0; i < STARTS; i++) {
    for (const kind of KINDS) {
      const name = `start-${kind}-${i}`;
      const t0 = Date.now();
      await createPod(name, SIDES[kind].node);
      running[kind].push((await podRunning(name)) - t0);
      toApi[kind].push(
        (await watch.readyAt(name)) - await containerStartedAt(kind, name),
      );
    }
  }
  keep({
    metric: `pod created → Running p50 (${STARTS})`,
    ours: p50(running.ours),
    upstream: p50(running.upstream),
    unit: "ms",
    target: "≤ 1.0",
  });
  console.log(`pod Running ms: ${JSON.stringify(running)}`);
  keep({
    metric: `container started → API has Ready p50 (${STARTS})`,
    ours: p50(toApi.ours),
    upstream: p50(toApi.upstream),
    unit: "ms",
    target: "≤ 0.8",
  });
  console.log(`container started → Ready in API ms: ${JSON.stringify(toApi)}`);

  const pids = {
    ours: ourKubelet!.pid,
    upstream: Number(await Deno.readTextFile(`${up.root}/kubelet.pid`)),
  };
  if (!CHURN_ONLY) await steadyAndApi(pids);
  if (!API_ONLY) await churnInTurns(pids);
} finally {
  if (rows.length > 0) console.log(table(rows));
  console.log(
    `load average: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`,
  );
  await watch?.stop();
  await teardown();
  api.close();
}

/** 6.: the churn, one kubelet at a time. */
async function churnInTurns(pids: Record<Kind, number>): Promise<void> {
  // one kubelet at a time (the runtime's work for 100 pods in flight fills this
  // machine), each on an emptied node
  await kubectl("-n", NAMESPACE, "delete", "pods", "--all", "--wait=false");
  const churned = new Map<Kind, Churned>();
  for (const k of KINDS) {
    await emptied(SIDES[k].node);
    const machine0 = await machineCpu();
    const result = await churn(k, pids[k], watch!);
    churned.set(k, result);
    console.log(
      `churn ${k}: ${JSON.stringify(result)}; machine CPU ${
        ((await machineCpu() - machine0) / CHURN_SECONDS).toFixed(2)
      } cores; load ${(await Deno.readTextFile("/proc/loadavg")).trim()}`,
    );
    await kubectl("-n", NAMESPACE, "delete", "pods", "--all", "--wait=false");
    await emptied(SIDES[k].node);
  }
  rows.push({
    metric: `churn of ${CHURN_PODS} pods for ${CHURN_SECONDS} s, pods/s`,
    ours: churned.get("ours")!.podsPerSecond,
    upstream: churned.get("upstream")!.podsPerSecond,
    unit: "pods/s",
    target: "≥ 1.0",
  });
  rows.push({
    metric: `churn, kubelet CPU`,
    ours: churned.get("ours")!.cores,
    upstream: churned.get("upstream")!.cores,
    unit: "cores",
    target: "≤ 0.5",
  });
  const perPod = (c: Churned) =>
    c.cores * CHURN_SECONDS / Math.max(1, c.completed);
  rows.push({
    metric: `churn, kubelet CPU per pod through`,
    ours: perPod(churned.get("ours")!),
    upstream: perPod(churned.get("upstream")!),
    unit: "s",
    target: "lower is better",
  });
}

/** Waits until no pod of the bench is left on `node`. */
function emptied(node: string): Promise<true> {
  return until(
    `no pods left on ${node}`,
    async () => (await podsOn(node)).length === 0 ? true : undefined,
    900_000,
    1000,
  );
}

/** 3. and 4.: the steady state at STEADY pods, then the kubelet API under load. */
async function steadyAndApi(pids: Record<Kind, number>): Promise<void> {
  const keep = (row: Row) => API_ONLY || rows.push(row);
  // 3. fill each node to STEADY pods (one busybox pod for exec), then sample
  for (const kind of KINDS) {
    const node = SIDES[kind].node;
    const t0 = Date.now();
    await createPod(`exec-${kind}`, node, BUSYBOX);
    const names = Array.from(
      { length: STEADY - STARTS - 1 },
      (_, i) => `steady-${kind}-${i}`,
    );
    for (let i = 0; i < names.length; i += 10) {
      await Promise.all(names.slice(i, i + 10).map((n) => createPod(n, node)));
    }
    await until(
      `${STEADY} pods Running on ${node}`,
      async () => (await runningOn(node)) >= STEADY ? true : undefined,
      900_000,
      1000,
    );
    console.log(
      `${kind}: ${STEADY - STARTS} more pods Running in ${
        ((Date.now() - t0) / 1000).toFixed(1)
      } s`,
    );
  }
  await sleep(15_000); // first relists and status updates settle
  const before = {
    ours: await usage(pids.ours),
    upstream: await usage(pids.upstream),
  };
  const rss = byKind();
  const t0 = performance.now();
  while (!API_ONLY && performance.now() - t0 < SAMPLE_MS) {
    await sleep(5_000);
    for (const k of KINDS) rss[k].push((await usage(pids[k])).rssMiB);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cores = byKind();
  for (const k of KINDS) {
    cores[k].push(((await usage(pids[k])).cpu - before[k].cpu) / seconds);
  }
  const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
  keep({
    metric: `RSS, ${STEADY} pods (mean over ${SAMPLE_MS / 1000} s)`,
    ours: mean(rss.ours),
    upstream: mean(rss.upstream),
    unit: "MiB",
    target: "≤ 1.0",
  });
  keep({
    metric: `CPU, ${STEADY} pods`,
    ours: cores.ours[0]!,
    upstream: cores.upstream[0]!,
    unit: "cores",
    target: "≤ 1.0",
  });

  // 4. the kubelet API, one kubelet at a time, taking turns
  for (const path of ["/healthz", "/pods"]) {
    const rps = byKind();
    const cpuMs = byKind();
    for (let i = 0; i < LOAD_ROUNDS; i++) {
      for (const k of KINDS) {
        const r = await load(SIDES[k].port, path, pids[k]);
        rps[k].push(r.rps);
        cpuMs[k].push(r.cpuMs);
      }
    }
    console.log(`GET ${path} req/s: ${JSON.stringify(rps)}`);
    console.log(`GET ${path} CPU ms/request: ${JSON.stringify(cpuMs)}`);
    rows.push({
      metric:
        `GET ${path} (${LOAD_CONCURRENCY} workers, p50 of ${LOAD_ROUNDS})`,
      ours: p50(rps.ours),
      upstream: p50(rps.upstream),
      unit: "req/s",
      target: "higher is better",
    });
    rows.push({
      metric: `GET ${path} kubelet CPU per request (p50 of ${LOAD_ROUNDS})`,
      ours: p50(cpuMs.ours),
      upstream: p50(cpuMs.upstream),
      unit: "ms",
      target: "lower is better",
    });
  }
  const exec = byKind();
  for (let i = 0; i < EXECS; i++) {
    for (const k of KINDS) {
      const t = performance.now();
      await kubectl("-n", NAMESPACE, "exec", `exec-${k}`, "--", "true");
      exec[k].push(performance.now() - t);
    }
  }
  console.log(`exec ms: ${JSON.stringify(exec)}`);
  rows.push({
    metric: `kubectl exec -- true p50 (${EXECS})`,
    ours: p50(exec.ours),
    upstream: p50(exec.upstream),
    unit: "ms",
    target: "lower is better",
  });
}

function table(list: Row[]): string {
  const fmt = (v: number) => (v < 10 ? v.toFixed(3) : v.toFixed(0));
  const lines = [[
    "metric",
    "ours",
    "upstream",
    "ratio ours/upstream",
    "target",
  ]];
  for (const r of list) {
    lines.push([
      r.metric,
      `${fmt(r.ours)} ${r.unit}`,
      `${fmt(r.upstream)} ${r.unit}`,
      (r.ours / r.upstream).toFixed(2),
      r.target,
    ]);
  }
  const widths = lines[0]!.map((_, c) =>
    Math.max(...lines.map((l) => l[c]!.length))
  );
  return lines.map((l) =>
    l.map((cell, c) => cell.padEnd(widths[c]!)).join("  ")
  )
    .join("\n");
}
