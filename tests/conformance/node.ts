/**
 * The node under test for scripts/conformance.ts: the upstream kubelet
 * (scripts/upstream_kubelet.sh) or kubelet.ts, each on its own runtime-only containerd,
 * joined to the conformance control plane through TLS bootstrap.
 *
 * The node's address is the gateway of its containerd's CNI bridge, created here before the
 * kubelet starts: the upstream kubelet refuses a loopback node IP, and the API server must
 * reach the kubelet's API (exec, logs, port-forward) at the node's InternalIP. The bridge is
 * this run's own test network, so nothing is served on the machine's real interfaces.
 */
import { statfs } from "node:fs/promises";
import { run } from "../cluster/_cluster.ts";
import { KUBELET_V8_FLAGS } from "../../scripts/v8_flags.ts";
import {
  DEFAULT_MEMORY_VOLUME_DIR,
  memoryVolumeDirFor,
} from "../../src/volume/mod.ts";
import { removeTree } from "../_mounts.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

export type KubeletKind = "ours" | "upstream";

/** Per-kind names, addresses and ports, apart from every other environment's. */
export const NODES: Record<KubeletKind, {
  node: string;
  bridge: string;
  subnet: string;
  ip: string;
  port: number;
  healthz: number;
}> = {
  upstream: {
    node: "kts-conf-upstream",
    bridge: "ktsconf-u",
    subnet: "10.121.0.0/16",
    ip: "10.121.0.1",
    port: 10750,
    healthz: 10748,
  },
  ours: {
    node: "kts-conf-ours",
    bridge: "ktsconf-o",
    subnet: "10.122.0.0/16",
    ip: "10.122.0.1",
    port: 10760,
    healthz: 10758,
  },
};

/** A node's name, CNI bridge and subnet (its gateway `ip` is the node IP) and ports. */
export type NodeSpec = (typeof NODES)[KubeletKind];

/**
 * The node of `kind` in slot `slot`: slot 0 is NODES itself, slot N moves names, subnet and
 * ports so that N runs (a CI subset beside a full run) never meet.
 */
export function nodeSpec(kind: KubeletKind, slot: number): NodeSpec {
  const n = NODES[kind];
  if (slot === 0) return n;
  const [a, b] = n.subnet.split(".");
  const net = `${a}.${Number(b) + 2 * slot}`;
  return {
    node: `${n.node}-${slot}`,
    bridge: `${n.bridge}${slot}`,
    subnet: `${net}.0.0/16`,
    ip: `${net}.0.1`,
    port: n.port + 100 * slot,
    healthz: n.healthz + 100 * slot,
  };
}

export interface ClusterEnv {
  bootstrapKubeconfig: string;
  ca: string;
}

export interface Node extends AsyncDisposable {
  name: string;
  /** The kubelet's log file. */
  log: string;
}

async function sh(
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  const r = await run(
    "bash",
    args.map((a, i) => i === 0 ? `${ROOT}/${a}` : a),
    env,
  );
  if (r.code !== 0) {
    throw new Error(
      `${args.join(" ")} failed (${r.code}):\n${r.stderr.slice(-3000)}`,
    );
  }
  return r.stdout;
}

async function ip(...args: string[]): Promise<void> {
  const r = await run("ip", args);
  if (r.code !== 0) throw new Error(`ip ${args.join(" ")}: ${r.stderr}`);
}

const TMPFS_MAGIC = 0x01021994;

/**
 * A kubelet.ts that can mount nothing (no cgroup agent, no `--allow-run`) keeps `medium:
 * Memory` emptyDirs in /run/kubelet.ts/memory and needs a tmpfs there (docs/volumes.md); the
 * harness's, with every permission, mounts a tmpfs per volume itself, and the directory is
 * provided anyway, as a systemd host's /run would be. It stays mounted: another run or
 * kubelet.ts on the machine may be using it.
 */
export async function ensureMemoryTmpfs(
  dir = DEFAULT_MEMORY_VOLUME_DIR,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if ((await statfs(dir)).type === TMPFS_MAGIC) return;
  const r = await run("mount", [
    "-t",
    "tmpfs",
    "-o",
    "mode=0700",
    "kts-memory",
    dir,
  ]);
  if (r.code !== 0) {
    throw new Error(`mount a tmpfs on ${dir}: ${r.stderr.trim()}`);
  }
}

/** The CNI bridge with the node's address on it, made before the bridge plugin sees it. */
async function makeBridge(
  bridge: string,
  address: string,
  subnet: string,
): Promise<void> {
  const prefix = subnet.split("/")[1];
  if ((await run("ip", ["link", "show", bridge])).code !== 0) {
    await ip("link", "add", bridge, "type", "bridge");
  }
  const addrs = await run("ip", ["-4", "addr", "show", "dev", bridge]);
  if (!addrs.stdout.includes(`inet ${address}/`)) {
    await ip("addr", "add", `${address}/${prefix}`, "dev", bridge);
  }
  await ip("link", "set", bridge, "up");
}

/** kubelet.ts's configuration: the same knobs the upstream side gets from its script. */
function ourConfig(
  n: NodeSpec,
  root: string,
  criSock: string,
  cluster: ClusterEnv,
): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    `containerRuntimeEndpoint: unix://${criSock}`,
    `staticPodPath: ${root}/manifests`,
    "cgroupDriver: cgroupfs",
    `cgroupRoot: /${n.node}`,
    "failSwapOn: false",
    "healthzBindAddress: 127.0.0.1",
    `healthzPort: ${n.healthz}`,
    `address: ${n.ip}`,
    `port: ${n.port}`,
    "readOnlyPort: 0",
    `podLogsDir: ${root}/pod-logs`,
    "resolvConf: /etc/resolv.conf",
    "syncFrequency: 10s",
    "authentication:",
    "  anonymous:",
    "    enabled: false",
    "  webhook:",
    "    enabled: true",
    "  x509:",
    `    clientCAFile: ${cluster.ca}`,
    "authorization:",
    "  mode: Webhook",
    "",
  ].join("\n");
}

async function healthy(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/healthz`);
    return (await r.text()).trim() === "ok";
  } catch {
    return false;
  }
}

/**
 * Starts the chosen kubelet under `root` and joins it; dispose to tear it all down. `at` is a
 * slot of nodeSpec or a spec of the caller's own.
 */
export async function startNode(
  kind: KubeletKind,
  root: string,
  cluster: ClusterEnv,
  at: number | NodeSpec = 0,
  options: {
    /** A `--config-dir` of drop-ins both kubelets read over their base configuration. */
    configDir?: string;
    /**
     * Mounts a filesystem of the caller's on the fresh, empty root before anything is written
     * to it (the node's own disk); the teardown unmounts everything at and below the root.
     */
    mountRoot?: (root: string) => Promise<void>;
    /**
     * Run on the node's fresh containerd (its socket path) before the kubelet starts, so
     * what it adds (images) is there at the kubelet's first look.
     */
    prepareRuntime?: (socket: string) => Promise<void>;
  } = {},
): Promise<Node> {
  const n = typeof at === "number" ? nodeSpec(kind, at) : at;
  await Deno.mkdir(root, { recursive: true });
  await makeBridge(n.bridge, n.ip, n.subnet);
  if (kind === "upstream") {
    const env = {
      KTS_UPSTREAM_ROOT: root,
      KTS_UPSTREAM_NODE: n.node,
      KTS_UPSTREAM_BOOTSTRAP_KUBECONFIG: cluster.bootstrapKubeconfig,
      KUBELET_TS_CLUSTER_CA: cluster.ca,
      KTS_UPSTREAM_BRIDGE: n.bridge,
      KTS_UPSTREAM_SUBNET: n.subnet,
      KTS_UPSTREAM_HEALTHZ_PORT: String(n.healthz),
      KTS_UPSTREAM_PORT: String(n.port),
      KTS_UPSTREAM_ARGS: `--node-ip=${n.ip} --address=${n.ip}${
        options.configDir ? ` --config-dir=${options.configDir}` : ""
      }`,
      // Its own pod log directory: kubelets remove the log directories of pods they do not
      // know, and other kubelets on this machine use /var/log/pods.
      KTS_UPSTREAM_CONFIG_EXTRA: `podLogsDir: ${root}/pod-logs`,
    };
    const down = () =>
      sh(["scripts/upstream_kubelet.sh", "down"], env).catch(() => {});
    if (options.mountRoot) {
      await down();
      await removeTree(root);
      await Deno.mkdir(root, { recursive: true });
      await options.mountRoot(root);
    }
    if (options.prepareRuntime) {
      // its containerd alone first (`up` keeps a running one), fresh
      const criEnv = {
        KTS_CRI_ROOT: `${root}/cri`,
        KTS_CRI_RUNTIME_ONLY: "1",
        KTS_CRI_BRIDGE: n.bridge,
        KTS_CRI_SUBNET: n.subnet,
      };
      // `down` would also unmount a mounted root
      if (!options.mountRoot) await down();
      await makeBridge(n.bridge, n.ip, n.subnet);
      try {
        await sh(["scripts/cri_env.sh", "up"], criEnv);
        await options.prepareRuntime(`${root}/cri/containerd.sock`);
      } catch (e) {
        await down();
        throw e;
      }
    }
    await sh(["scripts/upstream_kubelet.sh", "up"], env).catch(async (e) => {
      await down();
      throw e;
    });
    return {
      name: n.node,
      log: `${root}/kubelet.log`,
      async [Symbol.asyncDispose]() {
        await down();
        await run("ip", ["link", "delete", n.bridge]);
      },
    };
  }
  const criRoot = `${root}/cri`;
  const criEnv = {
    KTS_CRI_ROOT: criRoot,
    KTS_CRI_RUNTIME_ONLY: "1",
    KTS_CRI_BRIDGE: n.bridge,
    KTS_CRI_SUBNET: n.subnet,
  };
  // A fresh root: certificates and kubeconfig of an earlier run name an earlier cluster.
  await sh(["scripts/cri_env.sh", "down"], criEnv).catch(() => {});
  // Its Memory emptyDirs live outside the root (on the tmpfs) and stay charged to the node's
  // memory cgroup while they exist: an earlier run's would put this one under memory pressure.
  const memoryDir = memoryVolumeDirFor(`${root}/root`);
  await removeTree(root);
  await removeTree(memoryDir);
  if (options.mountRoot) {
    await Deno.mkdir(root, { recursive: true });
    await options.mountRoot(root);
  }
  await makeBridge(n.bridge, n.ip, n.subnet);
  await sh(["scripts/cri_env.sh", "up"], criEnv);
  await options.prepareRuntime?.(`${criRoot}/containerd.sock`);
  await Deno.mkdir(`${root}/manifests`, { recursive: true });
  await Deno.mkdir(`${root}/pod-logs`, { recursive: true });
  await ensureMemoryTmpfs();
  for (const h of Deno.readDirSync("/sys/fs/cgroup")) {
    if (h.isDirectory) {
      await Deno.mkdir(`/sys/fs/cgroup/${h.name}/${n.node}`, {
        recursive: true,
      })
        .catch(() => {});
    }
  }
  await Deno.writeTextFile(
    `${root}/config.yaml`,
    ourConfig(n, root, `${criRoot}/containerd.sock`, cluster),
  );
  const log = `${root}/kubelet.log`;
  const flags: Record<string, string> = {
    config: `${root}/config.yaml`,
    "root-dir": `${root}/root`,
    "cert-dir": `${root}/pki`,
    "bootstrap-kubeconfig": cluster.bootstrapKubeconfig,
    kubeconfig: `${root}/kubelet.kubeconfig`,
    "hostname-override": n.node,
    "node-ip": n.ip,
    v: "2",
    ...(options.configDir ? { "config-dir": options.configDir } : {}),
  };
  const deno = [Deno.execPath(), "run", "-A", `--v8-flags=${KUBELET_V8_FLAGS}`];
  // The shell only sends both streams to the log, then becomes the kubelet.
  const child = new Deno.Command("bash", {
    args: ["-c", 'exec "$@" >>"$0" 2>&1', log, ...deno, "main.ts"].concat(
      Object.entries(flags).map(([k, v]) => `--${k}=${v}`),
    ),
    cwd: ROOT,
    stdin: "null",
  }).spawn();
  const deadline = Date.now() + 90_000;
  while (!(await healthy(n.healthz))) {
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(
        `kubelet.ts did not answer its healthz within 90 s (log ${log})`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    name: n.node,
    log,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await child.status;
      // Its pods go with its containerd (cri_env down kills every task it has).
      await sh(["scripts/cri_env.sh", "down"], criEnv).catch(() => {});
      await run("ip", ["link", "delete", n.bridge]);
      await removeTree(root).catch(() => {});
      await removeTree(memoryDir).catch(() => {});
    },
  };
}
