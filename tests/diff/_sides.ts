/**
 * One "side" of a differential run: a kubelet (kubelet.ts or the upstream kubelet) on its
 * own runtime-only containerd, with peers/criproxy recording every CRI call in between.
 * Standalone, both sides use the same node name, so their static pods have the same names;
 * joined to a control plane (`join`), each registers its own Node, named apart, and the
 * comparison masks the name.
 */
import { KUBELET_V8_FLAGS } from "../../scripts/v8_flags.ts";
import { parseTrace, type TraceEntry } from "./normalize.ts";
import { removeTree } from "../_mounts.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

export type Kind = "ours" | "upstream";

export interface SideOptions {
  kind: Kind;
  node: string;
  /** The peers' bin directory (scripts/peers.sh dir). */
  bin: string;
  /** Private CNI bridge and subnet of this side's containerd. */
  bridge: string;
  subnet: string;
  /** Ports the upstream kubelet listens on (healthz, API); kubelet.ts runs with healthz off. */
  ports?: { healthz: number; api: number };
  /** Manifests (file name → pod) in place before the kubelet starts. */
  manifests?: Record<string, unknown>;
  /** Join the control plane through TLS bootstrap; standalone when absent. */
  join?: Join;
  /** KubeletConfiguration YAML lines both kubelets get on top of their own. */
  config?: string[];
}

/** What a side needs to join a control plane (scripts/cluster_env.sh). */
export interface Join {
  bootstrapKubeconfig: string;
  /** The cluster CA, which the upstream kubelet's webhook authentication wants. */
  ca: string;
}

export interface Side extends AsyncDisposable {
  kind: Kind;
  node: string;
  manifestDir: string;
  /** The kubelet's cgroupRoot. */
  cgroupRoot: string;
  /** Directories that belong to this run, for masking: name → path. */
  paths: Record<string, string>;
  trace(): Promise<TraceEntry[]>;
  /**
   * Stops the kubelet with `signal` (its containers keep running), runs `whileStopped`, and
   * starts it again.
   */
  restartKubelet(
    signal: "SIGTERM" | "SIGKILL",
    whileStopped?: () => Promise<void>,
  ): Promise<void>;
  /** The kubelet's log so far. */
  log(): Promise<string>;
  /** The kubelet's process id and when (epoch ms) its current process was started. */
  kubelet(): Promise<{ pid: number; startedAt: number }>;
}

async function sh(
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command("bash", {
    args,
    env,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  if (out.code !== 0) {
    throw new Error(
      `${args.join(" ")} failed (${out.code}):\n${dec.decode(out.stderr)}`,
    );
  }
  return dec.decode(out.stdout);
}

function spawnLogged(
  cmd: string,
  args: string[],
  logFile: string,
): Deno.ChildProcess {
  const log = Deno.openSync(logFile, { append: true, create: true });
  const child = new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const sink = log.writable;
  const writer = sink.getWriter();
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) await writer.write(chunk).catch(() => {});
  };
  Promise.all([pump(child.stdout), pump(child.stderr)]).finally(() =>
    writer.close().catch(() => {})
  );
  return child;
}

/** Stops `child` with `signal`, SIGKILL after 15 s; resolves once it exited. */
export async function stopChild(
  child: Deno.ChildProcess,
  signal: Deno.Signal,
): Promise<void> {
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }, 15_000);
  await child.status;
  clearTimeout(timer);
}

/** Waits until the socket at `path` exists. */
async function waitForSocket(path: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await Deno.stat(path);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`no socket at ${path} after 10 s`);
}

/**
 * kubelet.ts's cgroup root. The upstream kubelet uses `/<node>` (scripts/upstream_kubelet.sh)
 * and removes pod cgroups under it that it does not know, killing their processes, so the two
 * kubelets must not share a root; the traces mask both as `<kubepods>`.
 */
const OUR_CGROUP_ROOT = "/kts-diff";

/** Kills what is left under our cgroup root and removes its cgroups, deepest first. */
async function removeOurCgroups(): Promise<void> {
  await new Deno.Command("bash", {
    args: [
      "-c",
      // anything still running under our cgroup root first, then the empty directories
      `cat $(find /sys/fs/cgroup/pids${OUR_CGROUP_ROOT} -name tasks 2>/dev/null) 2>/dev/null | xargs -r kill -9 2>/dev/null; sleep 0.5; ` +
      `find /sys/fs/cgroup -depth -type d -path '*${OUR_CGROUP_ROOT}*' -exec rmdir {} \\; 2>/dev/null; true`,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
}

/** kubelet.ts's API port in a differential run (the upstream side's is 10450). */
const OUR_API_PORT = 10550;

function ourConfig(root: string, extra: string[]): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    `cgroupRoot: ${OUR_CGROUP_ROOT}`,
    `staticPodPath: ${root}/manifests`,
    `containerRuntimeEndpoint: unix://${root}/proxy.sock`,
    `podLogsDir: ${root}/pod-logs`,
    "healthzPort: 0",
    // the kubelet API on loopback, apart from the upstream side's and any real kubelet's
    "address: 127.0.0.1",
    `port: ${OUR_API_PORT}`,
    "fileCheckFrequency: 1s",
    "syncFrequency: 10s",
    "authentication:",
    "  anonymous:",
    "    enabled: false",
    "  webhook:",
    "    enabled: false",
    "authorization:",
    "  mode: AlwaysAllow",
    ...extra,
    "",
  ].join("\n");
}

/** Starts one side; dispose it to tear everything down. */
export async function startSide(options: SideOptions): Promise<Side> {
  const root = await Deno.makeTempDir({ prefix: `kts-diff-${options.kind}-` });
  const manifestDir = `${root}/manifests`;
  await Deno.mkdir(manifestDir);
  for (const [file, pod] of Object.entries(options.manifests ?? {})) {
    await Deno.writeTextFile(`${manifestDir}/${file}`, JSON.stringify(pod));
  }
  await Deno.mkdir(`${root}/pod-logs`);
  const traceFile = `${root}/trace.jsonl`;
  const criRoot = `${root}/cri`;
  const criEnv = {
    KTS_CRI_ROOT: criRoot,
    KTS_CRI_RUNTIME_ONLY: "1",
    KTS_CRI_BRIDGE: options.bridge,
    KTS_CRI_SUBNET: options.subnet,
  };
  const proxy = spawnLogged(`${options.bin}/criproxy`, [
    "-listen",
    `${root}/proxy.sock`,
    "-target",
    `${criRoot}/containerd.sock`,
    "-trace",
    traceFile,
  ], `${root}/criproxy.log`);
  const upstreamEnv = {
    KTS_UPSTREAM_ROOT: root,
    KTS_UPSTREAM_NODE: options.node,
    KTS_UPSTREAM_STATIC_DIR: manifestDir,
    KTS_UPSTREAM_CRI_ENDPOINT: `unix://${root}/proxy.sock`,
    KTS_UPSTREAM_BRIDGE: options.bridge,
    KTS_UPSTREAM_SUBNET: options.subnet,
    KTS_UPSTREAM_HEALTHZ_PORT: String(options.ports?.healthz ?? 10448),
    KTS_UPSTREAM_PORT: String(options.ports?.api ?? 10450),
    KTS_UPSTREAM_CONFIG_EXTRA: [
      `podLogsDir: ${root}/pod-logs`,
      ...(options.config ?? []),
    ].join("\n"),
    ...(options.join
      ? {
        KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG: options.join.bootstrapKubeconfig,
        KUBELET_TS_CLUSTER_CA: options.join.ca,
      }
      : {}),
  };
  let kubelet: Deno.ChildProcess | undefined;
  let ourStart = 0;
  const startOurs = () => {
    ourStart = Date.now();
    kubelet = spawnLogged(Deno.execPath(), [
      "run",
      "-A",
      // KTS_KUBELET_V8_FLAGS: other V8 flags for a profiling run (docs/performance.md)
      `--v8-flags=${Deno.env.get("KTS_KUBELET_V8_FLAGS") ?? KUBELET_V8_FLAGS}`,
      // KTS_KUBELET_DENO_ARGS: e.g. `--inspect=127.0.0.1:9339` for a profiling run
      ...(Deno.env.get("KTS_KUBELET_DENO_ARGS")?.split(" ").filter((a) => a) ??
        []),
      "main.ts",
      "--config",
      `${root}/config.yaml`,
      `--root-dir=${root}/kubelet`,
      `--cert-dir=${root}/pki`,
      `--hostname-override=${options.node}`,
      ...(options.join
        ? [
          `--kubeconfig=${root}/kubelet.conf`,
          `--bootstrap-kubeconfig=${options.join.bootstrapKubeconfig}`,
        ]
        : []),
    ], `${root}/kubelet.log`);
  };
  const paths: Record<string, string> = {
    logs: `${root}/pod-logs`,
    root: options.kind === "ours" ? `${root}/kubelet` : `${root}/root`,
    manifests: manifestDir,
    kubepods: options.kind === "ours"
      ? `${OUR_CGROUP_ROOT}/kubepods`
      : `/${options.node}/kubepods`,
    // joined sides have names of their own; standalone both are the same
    node: options.node,
  };
  try {
    await waitForSocket(`${root}/proxy.sock`);
    if (options.kind === "ours") {
      await sh(["scripts/cri_env.sh", "up"], criEnv);
      await Deno.writeTextFile(
        `${root}/config.yaml`,
        ourConfig(root, options.config ?? []),
      );
      startOurs();
    } else {
      await sh(["scripts/upstream_kubelet.sh", "up"], upstreamEnv);
    }
  } catch (e) {
    await stopChild(proxy, "SIGTERM");
    throw e;
  }
  return {
    kind: options.kind,
    node: options.node,
    manifestDir,
    cgroupRoot: options.kind === "ours" ? OUR_CGROUP_ROOT : `/${options.node}`,
    paths,
    async trace() {
      try {
        return parseTrace(await Deno.readTextFile(traceFile));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return [];
        throw e;
      }
    },
    async restartKubelet(signal, whileStopped) {
      if (options.kind === "ours") {
        if (kubelet) await stopChild(kubelet, signal);
        await whileStopped?.();
        startOurs();
      } else {
        await sh(["scripts/upstream_kubelet.sh", "stop-kubelet"], {
          ...upstreamEnv,
          KTS_UPSTREAM_SIGNAL: signal.replace(/^SIG/, ""),
        });
        await whileStopped?.();
        await sh(["scripts/upstream_kubelet.sh", "up"], upstreamEnv);
      }
    },
    async log() {
      return await Deno.readTextFile(`${root}/kubelet.log`).catch(() => "");
    },
    async kubelet() {
      if (options.kind === "ours") {
        return { pid: kubelet?.pid ?? 0, startedAt: ourStart };
      }
      const pid = Number(await Deno.readTextFile(`${root}/kubelet.pid`));
      const started = await Deno.readTextFile(`${root}/kubelet.started`);
      return { pid, startedAt: Math.round(Number(started) * 1000) };
    },
    async [Symbol.asyncDispose]() {
      // KTS_DIFF_KEEP=1 keeps the trace and the kubelet's log for a look afterwards.
      const keep = Deno.env.get("KTS_DIFF_KEEP") === "1";
      if (keep) {
        await Deno.mkdir(`${root}.kept`, { recursive: true });
        for (const f of ["trace.jsonl", "kubelet.log"]) {
          await Deno.copyFile(`${root}/${f}`, `${root}.kept/${f}`).catch(
            () => {},
          );
        }
      }
      if (options.kind === "ours") {
        if (kubelet) await stopChild(kubelet, "SIGTERM");
        // Stop and remove the pods while containerd runs: their processes outlive a killed
        // shim, and a stopped kubelet does not stop them.
        await new Deno.Command(`${options.bin}/crictl`, {
          args: [
            "--runtime-endpoint",
            `unix://${criRoot}/containerd.sock`,
            "rmp",
            "--all",
            "--force",
          ],
          stdin: "null",
          stdout: "null",
          stderr: "null",
        }).output().catch(() => {});
        await sh(["scripts/cri_env.sh", "down"], criEnv).catch(() => {});
        await removeOurCgroups();
      } else {
        await sh(["scripts/upstream_kubelet.sh", "down"], upstreamEnv).catch(
          () => {},
        );
      }
      await stopChild(proxy, "SIGTERM");
      // both kubelets bind their root dirs on themselves (MakeRShared) and leave pod mounts
      await removeTree(root).catch(() => {});
    },
  };
}

/** Both kubelets, each on its own network; disposing the pair tears both down. */
export interface SidePair extends AsyncDisposable {
  ours: Side;
  upstream: Side;
}

/**
 * Starts kubelet.ts and the upstream kubelet at once, standalone for the same node name, or
 * joined (`join`) each under its own.
 */
export async function startPair(
  nodes: Record<Kind, string>,
  bin: string,
  networks: Record<Kind, { bridge: string; subnet: string }>,
  join?: Join,
  config?: string[],
): Promise<SidePair> {
  const started = await Promise.allSettled(
    (["ours", "upstream"] as const).map((kind) =>
      startSide({
        kind,
        node: nodes[kind],
        bin,
        ...networks[kind],
        ...(join ? { join } : {}),
        ...(config ? { config } : {}),
      })
    ),
  );
  const [ours, upstream] = started.map((r) =>
    r.status === "fulfilled" ? r.value : undefined
  );
  if (!ours || !upstream) {
    await upstream?.[Symbol.asyncDispose]();
    await ours?.[Symbol.asyncDispose]();
    const failed = started.find((r) => r.status === "rejected");
    throw (failed as PromiseRejectedResult).reason;
  }
  return {
    ours,
    upstream,
    async [Symbol.asyncDispose]() {
      await upstream[Symbol.asyncDispose]();
      await ours[Symbol.asyncDispose]();
    },
  };
}
