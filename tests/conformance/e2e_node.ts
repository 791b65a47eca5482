/**
 * Upstream's node e2e suite (`test/e2e_node`, e2e_node.test of scripts/peers.sh
 * build-e2e-node) against one kubelet, the way upstream runs it on a test host: the suite
 * starts its own etcd, API server and namespace controller in process, then starts "the
 * kubelet" itself (services/kubelet.go) as a systemd transient unit, and restarts or kills it
 * through systemctl in the tests that need it. This machine has no systemd, so the suite's
 * PATH begins with scripts/e2e_node/bin: `systemd-run` and `systemctl` stand-ins that run the
 * unit as a plain background process, a `sudo` that runs its command (we are root), and the
 * `kubelet` the suite finds in its --k8s-bin-dir, which is the kubelet under test with the
 * suite's own flags. docs/conformance.md explains the choices.
 */
import { run } from "../cluster/_cluster.ts";
import type { KubeletKind } from "./node.ts";
import { ensureMemoryTmpfs } from "./node.ts";
import { KUBELET_V8_FLAGS } from "../../scripts/v8_flags.ts";
import { removeTree } from "../_mounts.ts";
import { superviseRuntime } from "./runtime_supervisor.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Per-kind names, runtime roots and addresses of the node e2e runs. */
export const E2E_NODES: Record<KubeletKind, {
  node: string;
  criRoot: string;
  bridge: string;
  subnet: string;
  ip: string;
  /** Flags after the suite's own (they win over its configuration file). */
  flags: string[];
}> = {
  upstream: {
    node: "kth8-upstream",
    criRoot: "/tmp/kts-cri-h8u",
    bridge: "kth8u",
    subnet: "10.118.0.0/16",
    ip: "10.118.0.1",
    flags: [],
  },
  ours: {
    node: "kth8-ours",
    criRoot: "/tmp/kts-cri-h8",
    bridge: "kth8",
    subnet: "10.108.0.0/16",
    ip: "10.108.0.1",
    // The suite sets anonymous authentication with AlwaysAllow, which kubelet.ts refuses to
    // serve (docs/differences.md). Webhook authorization asks the suite's API server, which
    // allows everything: the same answers, through the check kubelet.ts requires.
    flags: ["--authorization-mode=Webhook"],
  },
};

/**
 * The base KubeletConfiguration the suite starts from (its --kubelet-config-file): the
 * defaults services/kubelet.go uses when there is none, plus what keeps this run apart from
 * other kubelets on the machine: its own cgroup root and pod log directory.
 */
export function baseConfig(
  n: (typeof E2E_NODES)[KubeletKind],
  root: string,
): string {
  return [
    "apiVersion: kubelet.config.k8s.io/v1beta1",
    "kind: KubeletConfiguration",
    "cgroupDriver: cgroupfs",
    `cgroupRoot: /${n.node}`,
    `podLogsDir: ${root}/pod-logs`,
    "volumeStatsAggPeriod: 10s",
    "serializeImagePulls: false",
    "fileCheckFrequency: 10s",
    "podCIDR: 10.100.0.0/24",
    "evictionPressureTransitionPeriod: 30s",
    "evictionHard:",
    '  memory.available: "250Mi"',
    '  nodefs.available: "10%"',
    '  nodefs.inodesFree: "5%"',
    "evictionMinimumReclaim:",
    '  nodefs.available: "5%"',
    '  nodefs.inodesFree: "5%"',
    "failSwapOn: false",
    "resolvConf: /etc/resolv.conf",
    "",
  ].join("\n");
}

export interface E2eNodeRun {
  /** The suite's working directory: kubeconfig, kubelet-config, static-pods, reports. */
  out: string;
  procs: number;
  timeout: string;
  labelFilter: string;
  focus: string;
  skip: string;
  /** Directory of e2e_node.test and ginkgo. */
  e2eBin: string;
  /** Directory of the peers (the upstream kubelet, kubectl). */
  peersBin: string;
}

async function sh(args: string[], env: Record<string, string>) {
  const r = await run("bash", [`${ROOT}/${args[0]}`, ...args.slice(1)], env);
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

/** Stops every unit the systemd-run stand-in started (the suite leaves a failed run's up). */
async function stopUnits(state: string, env: Record<string, string>) {
  let entries: Deno.DirEntry[] = [];
  try {
    entries = [...Deno.readDirSync(state)];
  } catch {
    return; // no unit was ever started
  }
  for (const e of entries) {
    if (!e.name.endsWith(".cmd")) continue;
    await run(`${ROOT}/scripts/e2e_node/bin/systemctl`, [
      "stop",
      e.name.slice(0, -4),
    ], env);
  }
}

/** Runs the suite against `kind`; returns the suite's exit code (the JUnit report is in out). */
export async function runE2eNode(
  kind: KubeletKind,
  r: E2eNodeRun,
): Promise<number> {
  const n = E2E_NODES[kind];
  const root = `/tmp/kts-e2enode/${kind}`;
  const state = `${root}/units`;
  const criEnv = {
    KTS_CRI_ROOT: n.criRoot,
    KTS_CRI_RUNTIME_ONLY: "1",
    KTS_CRI_BRIDGE: n.bridge,
    KTS_CRI_SUBNET: n.subnet,
  };
  const env: Record<string, string> = {
    PATH: `${ROOT}/scripts/e2e_node/bin:${r.peersBin}:${
      Deno.env.get("PATH") ?? ""
    }`,
    KUBE_TEST_REPO_LIST: `${ROOT}/scripts/conformance/repo-list.yaml`,
    KTS_E2E_NODE_STATE: state,
    KTS_E2E_NODE_KUBELET: kind,
    KTS_E2E_NODE_UPSTREAM_BIN: `${r.peersBin}/kubelet`,
    KTS_E2E_NODE_DENO: Deno.execPath(),
    KTS_E2E_NODE_V8_FLAGS: KUBELET_V8_FLAGS,
  };
  await stopUnits(state, env);
  await sh(["scripts/cri_env.sh", "down"], criEnv).catch(() => {});
  await removeTree(root);
  await Deno.mkdir(`${root}/pod-logs`, { recursive: true });
  await Deno.mkdir(state, { recursive: true });
  // The node address is the gateway of the run's own CNI bridge (as in node.ts): the upstream
  // kubelet refuses a loopback node IP, and the API server reaches the kubelet there.
  if ((await run("ip", ["link", "show", n.bridge])).code !== 0) {
    await ip("link", "add", n.bridge, "type", "bridge");
  }
  await run("ip", ["addr", "add", `${n.ip}/16`, "dev", n.bridge]);
  await ip("link", "set", n.bridge, "up");
  await sh(["scripts/cri_env.sh", "up"], criEnv);
  await ensureMemoryTmpfs();
  for (const h of Deno.readDirSync("/sys/fs/cgroup")) {
    if (h.isDirectory) {
      await Deno.mkdir(`/sys/fs/cgroup/${h.name}/${n.node}`, {
        recursive: true,
      }).catch(() => {});
    }
  }
  await Deno.writeTextFile(`${root}/config.yaml`, baseConfig(n, root));
  const sock = `unix://${n.criRoot}/containerd.sock`;
  // Ginkgo runs a compiled suite in the binary's directory, where the suite writes its
  // kubeconfig, kubelet configuration and static pod directory: a link in `out` keeps them
  // there and out of the shared cache.
  const suiteBin = `${r.out}/e2e_node.test`;
  await Deno.remove(suiteBin).catch(() => {});
  await Deno.symlink(`${r.e2eBin}/e2e_node.test`, suiteBin);
  const args = [
    `--procs=${r.procs}`,
    `--timeout=${r.timeout}`,
    ...(r.labelFilter ? [`--label-filter=${r.labelFilter}`] : []),
    ...(r.focus ? [`--focus=${r.focus}`] : []),
    ...(r.skip ? [`--skip=${r.skip}`] : []),
    "--silence-skips",
    "--no-color",
    `--output-dir=${r.out}`,
    "--junit-report=junit.xml",
    suiteBin,
    "--",
    `--k8s-bin-dir=${ROOT}/scripts/e2e_node/bin`,
    `--node-name=${n.node}`,
    `--container-runtime-endpoint=${sock}`,
    // The tests that kill the runtime find it here (scripts/cri_env's pid file holds the pid
    // alone, as the suite's parser needs) and expect it back, as systemd would start it.
    `--container-runtime-pid-file=${n.criRoot}/run/containerd.pid`,
    `--kubelet-config-file=${root}/config.yaml`,
    // After the suite's own flags, so these win: a root directory of the run's own (not
    // /var/lib/kubelet) and the bridge's address as the node's.
    `--kubelet-flags=${
      [`--root-dir=${root}/root`, `--node-ip=${n.ip}`, ...n.flags].join(" ")
    }`,
    // The images come from the local registry; a pull the suite makes up front would fail on
    // the ones not built here and abort the whole suite instead of the tests that use them.
    "--prepull-images=false",
    `--report-dir=${r.out}`,
    `--kubectl-path=${r.peersBin}/kubectl`,
  ];
  const runtime = superviseRuntime({
    pidFile: `${n.criRoot}/run/containerd.pid`,
    configPath: `${n.criRoot}/containerd.toml`,
    restart: () => sh(["scripts/cri_env.sh", "up"], criEnv).then(() => {}),
  });
  try {
    const suite = await new Deno.Command("bash", {
      args: [
        "-c",
        'exec "$@" >"$0" 2>&1',
        `${r.out}/e2e.log`,
        `${r.e2eBin}/ginkgo`,
        ...args,
      ],
      cwd: r.out,
      env,
      stdin: "null",
    }).output();
    return suite.code;
  } finally {
    // The kubelet's output is already in <out>/kubelet.log (the unit's StandardError).
    await runtime.stop();
    await stopUnits(state, env);
    await sh(["scripts/cri_env.sh", "down"], criEnv).catch(() => {});
    await run("ip", ["link", "delete", n.bridge]);
  }
}
