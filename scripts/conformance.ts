/**
 * `deno task conformance [--suite=conformance|node|e2e-node] [--kubelet=upstream|ours|both]
 * [--selection=<slice of --suite=node>] [--label-filter=<ginkgo labels>] [--focus=<regex>] [--skip=<regex>] [--procs=N]
 * [--timeout=<go duration>] [--out=<dir>] [--slot=N] [--summarize]`: upstream's
 * [NodeConformance] e2e tests (the e2e.test binary of the pinned Kubernetes version,
 * scripts/peers.sh build-e2e) against a one-node cluster whose node is the chosen kubelet.
 * `--suite=node`: the same binary's other sig-node and sig-storage tests that one node can
 * run (NODE_LABELS), or one of its named slices (SELECTIONS). `--suite=e2e-node`: upstream's node e2e suite (test/e2e_node,
 * scripts/peers.sh build-e2e-node) run by tests/conformance/e2e_node.ts, which starts its own
 * API server and starts, restarts and kills the kubelet itself.
 * For each kubelet: a fresh control plane of its own (scripts/cluster_env.sh under its own
 * root and ports, so no other node exists), the test images pushed to the local registry
 * (scripts/conformance/images.sh), the kubelet joined through TLS bootstrap
 * (tests/conformance/node.ts), then the suite through the ginkgo CLI. Writes
 * <out>/<kubelet>/junit.xml, results.json, the suite's output and the kubelet's log, and
 * <out>/summary.md (per test; with both kubelets, the tests that pass with upstream and not
 * with ours). A kubelet not run keeps its last results in <out>; --summarize only rewrites
 * the summary. Needs root. docs/conformance.md explains the choices.
 */
import { errorMessage } from "../src/util/error_message.ts";
import { run } from "../tests/cluster/_cluster.ts";
import { type KubeletKind, startNode } from "../tests/conformance/node.ts";
import { runE2eNode } from "../tests/conformance/e2e_node.ts";
import {
  type EnvironmentRule,
  parseJUnit,
  renderSummary,
  type Run,
  score,
} from "../tests/conformance/report.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/**
 * Failures the environment explains, for both kubelets alike (docs/conformance.md): images
 * this machine cannot build, and tests that need what a stand-in image lacks.
 */
export const ENVIRONMENT: EnvironmentRule[] = [
  ...[
    "ipc-utils",
    "kitten",
    "nautilus",
    "volume/nfs",
    "perl",
  ].map((image) => ({
    in: "failure" as const,
    text: `e2e-test-images/${image}:`,
    why: `needs the ${image} image, not built here`,
  })),
  ...[
    "[sig-node] [FeatureGate:KubeletFineGrainedAuthz] [Beta] when calling kubelet API",
    "[sig-node] PreStop graceful pod terminated should wait until preStop hook completes the process",
    "[sig-node] Pods Extended Delete Grace Period should be submitted and removed",
    "[sig-node] kubelet Clean up pods on node",
  ].map((text) => ({
    in: "name" as const,
    text,
    why:
      "it reaches the kubelet at port 10250, written into the test; the harness gives each kubelet a port of its own beside the other runs on this machine (the node's daemon endpoint names it)",
  })),
  {
    in: "output",
    text: "nsenter: cannot open /rootfs/proc/1/ns/mnt: Permission denied",
    why:
      "the test prepares its volume on the host by entering PID 1's mount namespace from a pod; this machine's PID 1 refuses that even to root on the host",
  },
  {
    in: "name",
    text:
      "[sig-node] Mount propagation should propagate mounts within defined scopes",
    why:
      "its hostPath is under /var/lib/kubelet, which is a shared mount only where a kubelet's root directory is; the harness gives the kubelet a root directory of its own",
  },
  // The node e2e suite (--suite=e2e-node).
  {
    in: "name",
    text: "Kubelet Cgroup Manager",
    why:
      "it expects the pod cgroups under cgroup root /; the harness gives the kubelet a cgroup root of its own on this shared machine",
  },
  {
    in: "name",
    text: "should print log to correct cri log path",
    why:
      "it looks for the log under /var/log/pods; the harness gives the kubelet a pod log directory of its own on this shared machine",
  },
  {
    in: "name",
    text:
      "[sig-node] PrivilegedPod [NodeConformance] should enable privileged commands",
    why:
      "this machine's kernel has no dummy link type (`ip link add dummy1 type dummy`)",
  },
];

export type Suite = "conformance" | "node" | "e2e-node";

/**
 * The cluster binary's tests beyond the NodeConformance label that a single node can run:
 * sig-node and sig-storage, without the labels of special environments (Feature:*), of feature
 * gates that are off by default, of tests that take the node away (Serial, Disruptive) and of
 * known flakes.
 */
export const NODE_LABELS =
  "(sig-node || sig-storage) && !NodeConformance && !/Feature:.+/ && !Alpha && " +
  "!BetaOffByDefault && !DRA && !Serial && !Disruptive && !Flaky";

/**
 * Named slices of `--suite=node` that one node of this harness can run through
 * (docs/conformance.md, "Beyond the label"): a label filter and a focus each. In-place resize
 * has its own slice; storage leaves out what needs CSI, persistent volume claims, NFS or a
 * cloud, since the kubelet under test only sets up in-pod volume sources here.
 */
export const SELECTIONS: Record<
  string,
  { labels: string; focus: string }
> = {
  "sig-node": {
    labels:
      `sig-node && !FeatureGate:InPlacePodVerticalScaling && ${NODE_LABELS}`,
    focus: "",
  },
  resize: {
    labels:
      `sig-node && FeatureGate:InPlacePodVerticalScaling && ${NODE_LABELS}`,
    focus: "",
  },
  storage: {
    labels: `sig-storage && ${NODE_LABELS}`,
    focus: "\\[sig-storage\\] (" + [
      "ConfigMap",
      "Downward API volume",
      "EmptyDir",
      "Ephemeralstorage",
      "HostPathType",
      "Projected",
      "Secrets",
      "Subpath",
      // API objects only: no pod, or a pod the kubelet never sees.
      "CSIInlineVolumes",
      "CSINodes",
      "CSIStorageCapacity",
      "StorageClasses",
      "VolumeAttachment",
      "PV Protection",
      "PersistentVolumes CSI Conformance",
      "Flexvolumes",
    ].join("|") + ") ",
  },
  "storage-inline": {
    labels: `sig-storage && ${NODE_LABELS}`,
    focus:
      "\\[Driver: (hostPath|hostPathSymlink|emptydir)\\] \\[Testpattern: Inline-volume",
  },
  // Local PVs: upstream's local volume tests, and the per-driver suites of the `dir` type
  // with the only patterns the local driver runs (pre-provisioned PVs with a file system).
  "storage-local": {
    labels: `sig-storage && ${NODE_LABELS}`,
    focus: "\\[sig-storage\\] PersistentVolumes-local |" +
      "\\[Driver: local\\] \\[LocalVolumeType: dir\\] " +
      "\\[Testpattern: Pre-provisioned PV \\((default fs|filesystem volmode)\\)\\]",
  },
};

/** Per suite: the default Ginkgo label filter and the default report directory. */
export const SUITES: Record<Suite, { labels: string; out: string }> = {
  conformance: {
    labels: "NodeConformance",
    out: "/tmp/kts-conformance/report",
  },
  node: { labels: NODE_LABELS, out: "/tmp/kts-conformance/report-node" },
  // The node e2e suite's own conformance set first; --label-filter widens it.
  "e2e-node": {
    labels: "NodeConformance",
    out: "/tmp/kts-conformance/report-e2e-node",
  },
};

const slotSuffix = (slot: number) => slot === 0 ? "" : `-${slot}`;

/** A control plane per kubelet (so both runs can go at once), apart from the shared one. */
function clusterEnv(kind: KubeletKind, slot: number): Record<string, string> {
  const offset = (kind === "upstream" ? 0 : 10) + 100 * slot;
  return {
    KTS_CLUSTER_ROOT: `/tmp/kts-conformance/cluster-${kind}${slotSuffix(slot)}`,
    KTS_CLUSTER_PORT: String(16543 + offset),
    KTS_CLUSTER_ETCD_PORT: String(23890 + offset),
    KTS_CLUSTER_KCM_PORT: String(10357 + offset),
    KTS_CLUSTER_SCHEDULER_PORT: String(10359 + offset),
  };
}

export interface Options {
  suite: Suite;
  kubelets: KubeletKind[];
  labelFilter: string;
  focus: string;
  skip: string;
  procs: number;
  /** Moves roots, names, subnets and ports so that runs in other slots never meet. */
  slot: number;
  timeout: string;
  out: string;
}

export function parseOptions(args: readonly string[]): Options {
  const get = (name: string) =>
    args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  // --summarize: no run, only the summary of the results already in --out.
  const kubelet = args.includes("--summarize")
    ? "none"
    : get("kubelet") ?? "upstream";
  const kubelets: KubeletKind[] | undefined = kubelet === "none"
    ? []
    : kubelet === "both"
    ? ["upstream", "ours"]
    : kubelet === "upstream" || kubelet === "ours"
    ? [kubelet]
    : undefined;
  if (!kubelets) {
    throw new Error(`--kubelet=${kubelet}: use upstream, ours or both`);
  }
  const suite = get("suite") ?? "conformance";
  if (!(suite in SUITES)) {
    throw new Error(`--suite=${suite}: use conformance, node or e2e-node`);
  }
  const procs = Number(get("procs") ?? "4");
  if (!Number.isInteger(procs) || procs < 1) {
    throw new Error(
      `--procs=${get("procs")}: use a whole number of at least 1`,
    );
  }
  for (const a of args) {
    if (
      !/^--((suite|kubelet|selection|label-filter|focus|skip|procs|timeout|out|slot)=|summarize$)/
        .test(a)
    ) {
      throw new Error(
        `unknown argument ${a}: use --suite=, --kubelet=, --selection=, --label-filter=, --focus=, --skip=, --procs=, --timeout=, --out=, --slot=, --summarize`,
      );
    }
  }
  const s = SUITES[suite as Suite];
  const name = get("selection");
  const selection = name === undefined ? undefined : SELECTIONS[name];
  if (name !== undefined) {
    if (!selection) {
      throw new Error(
        `--selection=${name}: use ${Object.keys(SELECTIONS).join(", ")}`,
      );
    }
    if (suite !== "node") {
      throw new Error(`--selection=${name} needs --suite=node`);
    }
    if (get("label-filter") !== undefined || get("focus") !== undefined) {
      throw new Error(
        `--selection=${name} sets the label filter and focus: leave out --label-filter= and --focus= (--skip= still narrows it)`,
      );
    }
  }
  return {
    suite: suite as Suite,
    kubelets,
    labelFilter: selection?.labels ?? get("label-filter") ?? s.labels,
    focus: selection?.focus ?? get("focus") ?? "",
    skip: get("skip") ?? "",
    procs,
    slot: Number(get("slot") ?? "0") || 0,
    timeout: get("timeout") ?? "3h",
    out: get("out") ?? s.out,
  };
}

function log(msg: string): void {
  // deno-lint-ignore no-console
  console.error(`conformance: ${msg}`);
}

async function bash(
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const r = await run("bash", [`${ROOT}/${args[0]}`, ...args.slice(1)], env);
  if (r.code !== 0) {
    throw new Error(
      `${args.join(" ")} failed (${r.code}):\n${r.stderr.slice(-3000)}`,
    );
  }
  return r.stdout;
}

function envLines(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
  }
  return env;
}

async function kubectl(bin: string, kubeconfig: string, ...args: string[]) {
  return await run(`${bin}/kubectl`, ["--kubeconfig", kubeconfig, ...args]);
}

/** Waits until the node is Ready and carries no taint (the suite waits for schedulable). */
async function waitSchedulable(bin: string, kubeconfig: string, node: string) {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const r = await kubectl(bin, kubeconfig, "get", "node", node, "-o", "json");
    if (r.code === 0) {
      const n = JSON.parse(r.stdout);
      const ready = (n.status?.conditions ?? []).some((
        c: { type: string; status: string },
      ) => c.type === "Ready" && c.status === "True");
      if (ready && (n.spec?.taints ?? []).length === 0) return;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `node ${node} did not become Ready and untainted within 180 s`,
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * The selected tests of a JUnit report, scored with the environment rules. The default
 * suite keeps to the tests named [NodeConformance] as it always did; the others take every
 * test the run selected.
 */
function scoreReport(
  xml: string,
  sel: { focus: string; skip: string; suite?: Suite },
) {
  const focus = sel.focus ? new RegExp(sel.focus) : undefined;
  const skip = sel.skip ? new RegExp(sel.skip) : undefined;
  const conformance = (sel.suite ?? "conformance") === "conformance";
  return parseJUnit(
    xml,
    (name) =>
      (!conformance || name.includes("[NodeConformance]")) &&
      (!focus || focus.test(name)) && !(skip?.test(name)),
    ENVIRONMENT,
  );
}

/** One kubelet's run; returns its results. */
async function runFor(
  kind: KubeletKind,
  opts: Options,
  e2eBin: string,
): Promise<Run> {
  const out = `${opts.out}/${kind}`;
  await Deno.remove(out, { recursive: true }).catch(() => {});
  await Deno.mkdir(out, { recursive: true });
  log(`${kind}: fresh control plane`);
  await bash(["scripts/cluster_env.sh", "down"], clusterEnv(kind, opts.slot));
  const cluster = envLines(
    await bash(["scripts/cluster_env.sh", "up"], clusterEnv(kind, opts.slot)),
  );
  const kubeconfig = cluster.KUBELET_TS_KUBECONFIG!;
  const bin = cluster.KUBELET_TS_K8S_BIN!;
  log(`${kind}: joining the kubelet`);
  const root = `/tmp/kts-conformance/${kind}${slotSuffix(opts.slot)}`;
  await using node = await startNode(kind, root, {
    bootstrapKubeconfig: cluster.KUBELET_TS_BOOTSTRAP_KUBECONFIG!,
    ca: cluster.KUBELET_TS_CLUSTER_CA!,
  }, opts.slot);
  await waitSchedulable(bin, kubeconfig, node.name);
  log(
    `${kind}: node ${node.name} is Ready; running the suite (${opts.procs} processes)`,
  );
  const started = Date.now();
  const ginkgoArgs = [
    `--procs=${opts.procs}`,
    `--timeout=${opts.timeout}`,
    ...(opts.labelFilter ? [`--label-filter=${opts.labelFilter}`] : []),
    ...(opts.focus ? [`--focus=${opts.focus}`] : []),
    ...(opts.skip ? [`--skip=${opts.skip}`] : []),
    "--silence-skips",
    "--no-color",
    `--output-dir=${out}`,
    "--junit-report=junit.xml",
    `${e2eBin}/e2e.test`,
    "--",
    `--kubeconfig=${kubeconfig}`,
    "--provider=skeleton",
    `--kubectl-path=${bin}/kubectl`,
    "--allowed-not-ready-nodes=0",
    "--dump-logs-on-failure=true",
  ];
  const suiteLog = `${out}/e2e.log`;
  const suite = await new Deno.Command("bash", {
    args: [
      "-c",
      'exec "$@" >"$0" 2>&1',
      suiteLog,
      `${e2eBin}/ginkgo`,
      ...ginkgoArgs,
    ],
    cwd: out,
    env: {
      KUBE_TEST_REPO_LIST: `${ROOT}/scripts/conformance/repo-list.yaml`,
      PATH: `${bin}:${Deno.env.get("PATH") ?? ""}`,
    },
    stdin: "null",
  }).output();
  const seconds = (Date.now() - started) / 1000;
  await Deno.copyFile(node.log, `${out}/kubelet.log`).catch(() => {});
  return await scoreRun(kind, opts, out, seconds, suite.code);
}

/** Scores the JUnit report a run left in `out` and writes its results.json. */
async function scoreRun(
  kind: KubeletKind,
  opts: Options,
  out: string,
  seconds: number,
  code: number,
): Promise<Run> {
  const suiteLog = `${out}/e2e.log`;
  const xml = await Deno.readTextFile(`${out}/junit.xml`).catch(() => "");
  if (xml === "") {
    throw new Error(
      `${kind}: the suite wrote no JUnit report (exit ${code}); see ${suiteLog}`,
    );
  }
  const results = scoreReport(xml, opts);
  if (results.length === 0) {
    throw new Error(
      `${kind}: the JUnit report has no selected test (suite exit ${code}); see ${suiteLog}`,
    );
  }
  const s = score(results);
  log(
    `${kind}: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped, ` +
      `${s.environment} environment failures in ${Math.round(seconds)} s`,
  );
  await Deno.writeTextFile(
    `${out}/results.json`,
    JSON.stringify(
      {
        seconds,
        suite: opts.suite,
        labelFilter: opts.labelFilter,
        focus: opts.focus,
        skip: opts.skip,
        results,
      },
      null,
      1,
    ),
  );
  return { kubelet: kind, results, seconds };
}

/** One kubelet's run of the node e2e suite (tests/conformance/e2e_node.ts). */
async function runE2eNodeFor(
  kind: KubeletKind,
  opts: Options,
  bins: { e2e: string; peers: string },
): Promise<Run> {
  const out = `${opts.out}/${kind}`;
  await Deno.remove(out, { recursive: true }).catch(() => {});
  await Deno.mkdir(out, { recursive: true });
  log(`${kind}: node e2e suite (${opts.procs} processes)`);
  const started = Date.now();
  const code = await runE2eNode(kind, {
    out,
    procs: opts.procs,
    timeout: opts.timeout,
    labelFilter: opts.labelFilter,
    focus: opts.focus,
    skip: opts.skip,
    e2eBin: bins.e2e,
    peersBin: bins.peers,
  });
  return await scoreRun(kind, opts, out, (Date.now() - started) / 1000, code);
}

async function main(): Promise<number> {
  let opts: Options;
  try {
    opts = parseOptions(Deno.args);
  } catch (e) {
    log((e as Error).message);
    return 2;
  }
  if (Deno.uid() !== 0) {
    log("must run as root (containerd and the kubelets need it)");
    return 2;
  }
  let e2eBin = "";
  let peersBin = "";
  const runs: Run[] = [];
  if (opts.kubelets.length > 0) {
    log("building or reusing the peers and the e2e suite (scripts/peers.sh)");
    peersBin = (await bash(["scripts/peers.sh", "build"])).trim();
    e2eBin = (await bash(["scripts/peers.sh", "build-e2e"])).trim();
    await bash(["scripts/cri_env.sh", "up"]);
    await bash(["scripts/conformance/images.sh", e2eBin]);
  }
  if (opts.suite === "e2e-node" && opts.kubelets.length > 0) {
    const e2e = (await bash(["scripts/peers.sh", "build-e2e-node"])).trim();
    // One after the other: the suite's API server and the kubelet use fixed ports.
    for (const kind of opts.kubelets) {
      runs.push(await runE2eNodeFor(kind, opts, { e2e, peers: peersBin }));
    }
  }
  for (const kind of opts.suite === "e2e-node" ? [] : opts.kubelets) {
    try {
      runs.push(await runFor(kind, opts, e2eBin));
    } finally {
      await bash(
        ["scripts/cluster_env.sh", "down"],
        clusterEnv(kind, opts.slot),
      );
    }
  }
  // A kubelet not run this time keeps its last run in the same --out directory; its JUnit
  // report is scored again, with the current environment rules.
  for (const kind of ["upstream", "ours"] as const) {
    if (opts.kubelets.includes(kind)) continue;
    const last = await Deno.readTextFile(`${opts.out}/${kind}/results.json`)
      .catch(() => "");
    const xml = await Deno.readTextFile(`${opts.out}/${kind}/junit.xml`)
      .catch(() => "");
    if (!last || !xml) continue;
    const { seconds, focus = "", skip = "" } = JSON.parse(last);
    runs.push({
      kubelet: kind,
      seconds,
      results: scoreReport(xml, { focus, skip, suite: opts.suite }),
    });
  }
  const summary = renderSummary(runs);
  await Deno.writeTextFile(`${opts.out}/summary.md`, summary);
  log(`summary in ${opts.out}/summary.md`);
  return 0;
}

if (import.meta.main) {
  // a failed run says what failed and where its logs are, without a stack trace
  const code = await main().catch((error) => {
    log(`error: ${errorMessage(error)}`);
    return 1;
  });
  Deno.exit(code);
}
