/**
 * Differential: the same kubectl commands (logs, exec, attach, port-forward, get --raw through
 * the node proxy) against the upstream kubelet and against kubelet.ts, both joined to the
 * shared control plane, each on its own containerd with a real node IP (the gateway of its
 * CNI bridge, from tests/conformance/node.ts) that the API server dials. Outputs are compared
 * after masking what is inherently variable (namespace, node name, timestamps, counters);
 * the differences we keep are in KEPT below and in docs/differences.md ("kubectl through the
 * kubelet API"). Needs root, the control plane (scripts/cluster_env.sh) and the peers
 * (bash scripts/peers.sh build); skips otherwise.
 */
import assert from "node:assert/strict";
import {
  type KubeletKind,
  type Node,
  type NodeSpec,
  startNode,
} from "../conformance/node.ts";
import { streamingContainers } from "../server/_stream_client.ts";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  CRI_IMAGE,
  deleteNode,
  getJson,
  kubectl,
  readingStdout,
  readTextUntil,
  run,
  waitFor,
} from "./_cluster.ts";
import {
  keyPaths,
  maskOutput,
  type Masks,
  metricNames,
  podOrder,
  podShape,
} from "./_kubectl_diff.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const KINDS: KubeletKind[] = ["upstream", "ours"];

/** Subnets 10.123 and 10.124, ports and names of this test alone. */
const SPECS: Record<KubeletKind, NodeSpec> = {
  upstream: {
    node: "kts-kdiff-upstream",
    bridge: "ktskdiff-u",
    subnet: "10.123.0.0/16",
    ip: "10.123.0.1",
    port: 11150,
    healthz: 11148,
  },
  ours: {
    node: "kts-kdiff-ours",
    bridge: "ktskdiff-o",
    subnet: "10.124.0.0/16",
    ip: "10.124.0.1",
    port: 11160,
    healthz: 11158,
  },
};

const nsOf = (kind: KubeletKind) => `kts-kdiff-${kind}`;

async function prerequisitesMissing(): Promise<string | undefined> {
  if (clusterMissing) return clusterMissing;
  if (Deno.uid() !== 0) return "needs root (containerd and the kubelets)";
  if (!cluster.ca) {
    return "KUBELET_TS_CLUSTER_CA is not set (scripts/cluster_env.sh env)";
  }
  const r = await run("bash", [`${ROOT}/scripts/peers.sh`, "dir"]);
  return r.code === 0
    ? undefined
    : "the upstream kubelet is not built: run bash scripts/peers.sh build";
}

const missing = await prerequisitesMissing();
if (missing) {
  // deno-lint-ignore no-console
  console.warn(`tests/cluster/kubectl_diff_test.ts skipped: ${missing}`);
}

/** One command's result, as the user sees it. */
interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl with the admin kubeconfig; `stdin` is written first, then closed unless `keepOpen`. */
async function spawnKubectl(
  args: string[],
  opts: { stdin?: string; keepOpen?: boolean; stderr?: "piped" | "null" } = {},
): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(`${cluster.bin}/kubectl`, {
    args: ["--kubeconfig", cluster.kubeconfig, ...args],
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: opts.stderr ?? "null",
  }).spawn();
  if (opts.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(opts.stdin));
    // kubectl attach -i ends the session when its stdin ends
    if (!opts.keepOpen) await w.close();
  }
  return child;
}

async function kubectlRun(args: string[], stdin?: string): Promise<Outcome> {
  const child = await spawnKubectl(args, {
    ...(stdin === undefined ? {} : { stdin }),
    stderr: "piped",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const out = await child.output();
  clearTimeout(timer);
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

/**
 * Runs a long-running kubectl (attach, port-forward), reads its stdout until `done` holds,
 * hands what was read to `use`, then stops it (SIGKILL after 20 s in any case).
 */
async function kubectlWhile<T>(
  args: string[],
  done: (text: string) => boolean,
  use: (text: string) => Promise<T> | T,
  stdin?: string,
): Promise<T> {
  const child = await spawnKubectl(args, {
    ...(stdin === undefined ? {} : { stdin, keepOpen: true }),
  });
  return await readingStdout(
    child,
    20_000,
    async (reader) => use(await readTextUntil(reader, done)),
  );
}

const kubectlUntil = (
  args: string[],
  done: (text: string) => boolean,
  stdin?: string,
) => kubectlWhile(args, done, (t) => t, stdin);

/** The status and body of httpd's page through `kubectl port-forward pod/diff :8080`. */
function portForwardBody(ns: string): Promise<string> {
  const banner = /127\.0\.0\.1:(\d+)/;
  return kubectlWhile(
    ["-n", ns, "port-forward", "pod/diff", ":8080"],
    (t) => banner.test(t),
    async (text) => {
      const port = banner.exec(text)?.[1];
      if (!port) return `no forwarding banner: ${text}`;
      const page = await fetch(`http://127.0.0.1:${port}/index.html`);
      return `${page.status} ${await page.text()}`;
    },
  );
}

/** Commands whose whole output (code, stdout, stderr) is compared; `ns` is the side's namespace. */
const COMMANDS: {
  name: string;
  args: (ns: string) => string[];
  stdin?: string;
}[] = [
  {
    name: "logs -c",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "printer"],
  },
  {
    name: "logs without -c (default container)",
    args: (ns) => ["-n", ns, "logs", "diff"],
  },
  {
    name: "logs --tail=2",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "printer", "--tail=2"],
  },
  {
    name: "logs --limit-bytes=10",
    args: (
      ns,
    ) => ["-n", ns, "logs", "diff", "-c", "printer", "--limit-bytes=10"],
  },
  {
    name: "logs --since=1h",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "printer", "--since=1h"],
  },
  {
    name: "logs --timestamps",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "printer", "--timestamps"],
  },
  {
    name: "logs --previous after a restart",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "crasher", "--previous"],
  },
  {
    name: "logs --previous of a container never restarted",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "printer", "--previous"],
  },
  {
    name: "logs of a missing container",
    args: (ns) => ["-n", ns, "logs", "diff", "-c", "nope"],
  },
  {
    name: "logs of a container not started",
    args: (ns) => ["-n", ns, "logs", "blocked"],
  },
  {
    name: "exec stdout, stderr and exit code 3",
    args: (ns) => [
      "-n",
      ns,
      "exec",
      "diff",
      "-c",
      "printer",
      "--",
      "sh",
      "-c",
      "echo out; echo err >&2; exit 3",
    ],
  },
  {
    name: "exec exit code 0",
    args: (ns) => ["-n", ns, "exec", "diff", "-c", "printer", "--", "true"],
  },
  {
    name: "exec of a command not found",
    args: (
      ns,
    ) => ["-n", ns, "exec", "diff", "-c", "printer", "--", "no-such-command"],
  },
  {
    name: "exec of a file that is not executable",
    args: (
      ns,
    ) => ["-n", ns, "exec", "diff", "-c", "printer", "--", "/etc/passwd"],
  },
  {
    name: "exec -i with stdin",
    args: (ns) => [
      "-n",
      ns,
      "exec",
      "-i",
      "diff",
      "-c",
      "printer",
      "--",
      "sh",
      "-c",
      "read x; echo got $x; cat",
    ],
    stdin: "hello\nrest\n",
  },
  {
    name: "exec in a missing container",
    args: (ns) => ["-n", ns, "exec", "diff", "-c", "nope", "--", "true"],
  },
];

/**
 * Key paths that differ and why (each one is in docs/differences.md, "kubectl through the
 * kubelet API"); any other difference fails the test.
 */
const KEPT_KEYS: Record<string, { keys: RegExp; why: string }[]> = {
  "/pods": [{
    keys: /^metadata\.(managedFields\b|resourceVersion$)/,
    why:
      "ours shows the pod's metadata as last seen from the API server, upstream as first seen",
  }],
  "/stats/summary": [{
    keys: /\.psi(\.|$)/,
    why: "pressure stall information needs /proc and cgroup files",
  }, {
    keys:
      /^node\.(cpu|io|network|rlimit|swap|systemContainers)\b|^node\.memory\.(majorPageFaults|pageFaults|rssBytes)$/,
    why:
      "host and system-container stats come from /proc and cgroups (cAdvisor upstream)",
  }, {
    keys: /^pods\[\]\.(containers\[\]\.)?(io|swap)\b/,
    why: "per-pod and per-container io and swap come from cgroups",
  }, {
    keys:
      /^pods\[\]\.(containers\[\]\.)?memory\.(availableBytes|majorPageFaults|pageFaults)$|^pods\[\]\.(network|process_stats)\b/,
    why:
      "ours reports these from CRI stats; upstream's cAdvisor finds none for these pods",
  }],
  "/configz": [{
    keys: /^kubeletconfig\.evictionHard\./,
    why:
      "the two nodes' configurations differ here (scripts/upstream_kubelet.sh sets it)",
  }],
};

/**
 * Metric families of libraries, not of the kubelet (Go runtime, client-go, component-base),
 * and cAdvisor's: upstream names with these prefixes that we lack are not listed one by one.
 */
const LIBRARY_METRICS =
  /^(go_|process_|rest_client_|workqueue_|apiserver_|aggregator_|cardinality_|disabled_metrics_|hidden_metrics_|registered_metrics_|container_|machine_)/;

/** The upstream metric names docs/differences.md lists as ones we lack. */
async function documentedMissingMetrics(): Promise<Set<string>> {
  const doc = await Deno.readTextFile(`${ROOT}/docs/differences.md`);
  const section = doc.split("\n## kubectl through the kubelet API")[1] ?? "";
  return new Set(
    [...section.split("\n## ")[0]!.matchAll(/`([a-z_:]+)`/g)].map((m) => m[1]!),
  );
}

interface PodStatusJson {
  status?: {
    containerStatuses?: {
      name: string;
      restartCount: number;
      state: Record<string, unknown>;
    }[];
  };
}

function podManifest(ns: string, node: string): string {
  const container = (name: string, script: string, extra = {}) => ({
    name,
    image: CRI_IMAGE,
    imagePullPolicy: "IfNotPresent",
    command: ["sh", "-c", script],
    ...extra,
  });
  const pod = (
    name: string,
    containers: unknown[],
    volumes: unknown[] = [],
  ) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels: { app: "kdiff" } },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      containers,
      volumes,
    },
  });
  return JSON.stringify({
    apiVersion: "v1",
    kind: "List",
    items: [
      pod("diff", [
        container(
          "printer",
          // A pause between the streams: containerd copies stdout and stderr apart, so lines
          // written at once to both may land in the log in either order.
          "printf 'line-1\\nline-2\\nline-3\\nline-4\\nline-5\\n'; sleep 0.3; echo err-line >&2; exec sleep 3600",
        ),
        ...streamingContainers(CRI_IMAGE),
        container("echo", "exec cat", { stdin: true }),
        // Fails once, then runs: a settled restart for --previous (a crash loop would
        // race the commands).
        container(
          "crasher",
          "if [ -e /data/ran ]; then echo second-run; exec sleep 3600; fi; touch /data/ran; echo previous-run; sleep 0.3; echo to-stderr >&2; exit 1",
          { volumeMounts: [{ name: "data", mountPath: "/data" }] },
        ),
      ], [{ name: "data", emptyDir: {} }]),
      pod("blocked", [{
        name: "never",
        image: "127.0.0.1:5000/kts/absent:none",
        imagePullPolicy: "Always",
      }]),
    ],
  });
}

/** Both pods are where every command above has something deterministic to show. */
async function podsSettled(ns: string): Promise<true> {
  const p = await getJson<PodStatusJson>("pod", "-n", ns, "diff");
  const statuses = p?.status?.containerStatuses ?? [];
  const running = statuses.filter((c) => c.state.running).map((c) => c.name);
  const crasher = statuses.find((c) => c.name === "crasher");
  const b = await getJson<PodStatusJson>("pod", "-n", ns, "blocked");
  const waiting = b?.status?.containerStatuses?.[0]?.state.waiting as
    | { reason?: string }
    | undefined;
  const settled =
    ["printer", "httpd", "talker", "echo", "crasher"].every((c) =>
      running.includes(c)
    ) &&
    crasher?.restartCount === 1 &&
    /ImagePull|ErrImage/.test(waiting?.reason ?? "");
  // thrown, waitFor's timeout names the last state seen
  if (!settled) {
    throw new Error(
      `not settled: ${JSON.stringify(statuses)}; blocked ${
        JSON.stringify(waiting)
      }`,
    );
  }
  return true;
}

async function startBoth(): Promise<Record<KubeletKind, Node>> {
  const join = {
    bootstrapKubeconfig: cluster.bootstrapKubeconfig,
    ca: cluster.ca,
  };
  const started = await Promise.allSettled(
    KINDS.map((kind) =>
      startNode(kind, `/tmp/kts-kdiff/${kind}`, join, SPECS[kind])
    ),
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    for (const s of started) {
      if (s.status === "fulfilled") await s.value[Symbol.asyncDispose]();
    }
    throw (failed as PromiseRejectedResult).reason;
  }
  const [upstream, ours] = started.map((s) =>
    (s as PromiseFulfilledResult<Node>).value
  );
  return { upstream: upstream!, ours: ours! };
}

Deno.test({
  name:
    "the same kubectl commands give the same output against kubelet.ts and the upstream kubelet",
  ignore: missing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const t0 = performance.now();
    const cleanUp = async () => {
      for (const kind of KINDS) {
        await kubectl(
          "delete",
          "namespace",
          nsOf(kind),
          "--ignore-not-found",
          "--wait=false",
        ).catch(() => {});
        await deleteNode(SPECS[kind].node);
      }
    };
    await cleanUp();
    const nodes = await startBoth();
    try {
      const masks: Record<KubeletKind, Masks> = {
        upstream: {
          ns: nsOf("upstream"),
          node: SPECS.upstream.node,
          ip: SPECS.upstream.ip,
        },
        ours: { ns: nsOf("ours"), node: SPECS.ours.node, ip: SPECS.ours.ip },
      };
      await Promise.all(KINDS.map(async (kind) => {
        await waitFor(
          `${kind} node Ready`,
          async () =>
            conditionTrue(await getJson("node", SPECS[kind].node), "Ready") ||
            undefined,
          // alone 10-15 s; beside the whole suite on two cores a minute was seen to pass
          180_000,
        );
        await waitFor(
          `namespace ${nsOf(kind)} gone`,
          async () =>
            (await getJson("namespace", nsOf(kind))) === undefined || undefined,
          60_000,
        );
        await kubectl("create", "namespace", nsOf(kind));
        const path = await Deno.makeTempFile({ suffix: ".json" });
        await Deno.writeTextFile(
          path,
          podManifest(nsOf(kind), SPECS[kind].node),
        );
        await kubectl("apply", "-f", path);
        await Deno.remove(path);
        await waitFor(
          `${kind}: pods settled`,
          () => podsSettled(nsOf(kind)),
          90_000,
        );
      }));
      const tReady = performance.now();
      const diffs: string[] = [];
      const compareKeys = (what: string, u?: string[], o?: string[]) => {
        const kept = (k: string) =>
          (KEPT_KEYS[what] ?? []).some((r) => r.keys.test(k));
        const onlyU = (u ?? []).filter((k) => !o?.includes(k) && !kept(k));
        const onlyO = (o ?? []).filter((k) => !u?.includes(k) && !kept(k));
        if (!u || !o || onlyU.length || onlyO.length) {
          diffs.push(
            `${what}: only upstream ${JSON.stringify(onlyU)}, only ours ${
              JSON.stringify(onlyO)
            }${u && o ? "" : " (missing)"}`,
          );
        }
      };
      const compare = (what: string, u: unknown, o: unknown) => {
        const a = JSON.stringify(u, null, 1);
        const b = JSON.stringify(o, null, 1);
        if (a !== b) diffs.push(`${what}:\n  upstream: ${a}\n  ours:     ${b}`);
      };

      for (const c of COMMANDS) {
        const [u, o] = await Promise.all(KINDS.map(async (kind) => {
          const r = await kubectlRun(c.args(nsOf(kind)), c.stdin);
          return {
            code: r.code,
            stdout: maskOutput(r.stdout, masks[kind]),
            stderr: maskOutput(r.stderr, masks[kind]),
          };
        }));
        compare(c.name, u, o);
      }

      const [attachU, attachO] = await Promise.all(
        KINDS.map(async (kind) =>
          maskOutput(
            await kubectlUntil(
              ["-n", nsOf(kind), "attach", "diff", "-c", "talker"],
              (t) => (t.match(/\n/g) ?? []).length >= 2,
            ),
            masks[kind],
          ).split("\n").slice(0, 2)
        ),
      );
      compare("attach", attachU, attachO);
      const [attachIU, attachIO] = await Promise.all(
        KINDS.map((kind) =>
          kubectlUntil(
            ["-n", nsOf(kind), "attach", "-i", "diff", "-c", "echo"],
            (t) => t.includes("hello\n"),
            "hello\n",
          )
        ),
      );
      compare("attach -i", attachIU, attachIO);
      compare(
        "port-forward",
        ...(await Promise.all(
          KINDS.map((kind) => portForwardBody(nsOf(kind))),
        )) as [string, string],
      );

      // KTS_KDIFF_DUMP=<dir> keeps what each node served, to look into a difference.
      const dump = Deno.env.get("KTS_KDIFF_DUMP");
      const raw = async (kind: KubeletKind, path: string) => {
        const body = await kubectl(
          "get",
          "--raw",
          `/api/v1/nodes/${SPECS[kind].node}/proxy${path}`,
        );
        if (dump) {
          await Deno.mkdir(dump, { recursive: true });
          await Deno.writeTextFile(
            `${dump}/${kind}${path.replaceAll("/", "_")}`,
            body,
          );
        }
        return body;
      };
      const both = (path: string) =>
        Promise.all(KINDS.map((kind) => raw(kind, path)));

      const [healthzU, healthzO] = await both("/healthz");
      compare("/healthz", healthzU, healthzO);
      const [podsU, podsO] = await both("/pods");
      for (const pod of ["diff", "blocked"]) {
        compareKeys("/pods", podShape(podsU!, pod), podShape(podsO!, pod));
        compare(
          `/pods ${pod}: order of conditions and container statuses`,
          podOrder(podsU!, pod),
          podOrder(podsO!, pod),
        );
      }
      const [runningU, runningO] = await both("/runningpods");
      compareKeys(
        "/runningpods",
        podShape(runningU!, "diff"),
        podShape(runningO!, "diff"),
      );
      // Upstream reports a pod's volumes only after its background calculator first ran for
      // the pod (it looks for new pods every volumeStatsAggPeriod); ours measures on request.
      const summaryU = await waitFor(
        "upstream's /stats/summary has pod volume stats",
        async () => {
          const body = await raw("upstream", "/stats/summary");
          return keyPaths(JSON.parse(body)).some((k) =>
              k.startsWith("pods[].volume")
            )
            ? body
            : undefined;
        },
        150_000,
      );
      const summaryO = await raw("ours", "/stats/summary");
      compareKeys(
        "/stats/summary",
        keyPaths(JSON.parse(summaryU!)),
        keyPaths(JSON.parse(summaryO!)),
      );
      const [configzU, configzO] = await both("/configz");
      compareKeys(
        "/configz",
        keyPaths(JSON.parse(configzU!)),
        keyPaths(JSON.parse(configzO!)),
      );
      const [metricsU, metricsO] = await both("/metrics");
      const ourMetrics = new Set(metricNames(metricsO!));
      const lacking = metricNames(metricsU!).filter((m) => !ourMetrics.has(m));
      const documented = await documentedMissingMetrics();
      const unexplained = lacking.filter((m) =>
        !LIBRARY_METRICS.test(m) && !documented.has(m)
      );

      const tDone = performance.now();
      // deno-lint-ignore no-console
      console.log(
        `kubectl diff: ready in ${
          Math.round((tReady - t0) / 1000)
        } s, compared in ${
          Math.round((tDone - tReady) / 1000)
        } s; ${lacking.length} upstream metric names we lack, ${
          lacking.filter((m) => !LIBRARY_METRICS.test(m)).length
        } of them the kubelet's own`,
      );
      assert.deepEqual(diffs, [], diffs.join("\n"));
      assert.deepEqual(
        unexplained,
        [],
        "upstream metrics we lack, not in docs/differences.md",
      );
    } finally {
      await Promise.all(
        KINDS.map((kind) => nodes[kind][Symbol.asyncDispose]()),
      );
      await cleanUp();
    }
  },
});
