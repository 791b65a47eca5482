/**
 * A cluster of three nodes on this machine (scripts/cluster_nodes.sh): two kubelet.ts nodes and
 * one upstream kubelet, each in a network namespace of its own with its own containerd and
 * kube-proxy, and CoreDNS. Two kubelet.ts nodes so that pod-to-pod traffic and Services run
 * between two of ours as well as across kinds; the upstream node is the reference that tells a
 * kubelet.ts failure from a broken environment. Checked through kubectl: a DaemonSet gets one
 * Ready pod on every node, every pod reaches the pod on the next node, a ClusterIP Service
 * backed on one node answers pods of the other nodes, and the Service's name resolves through
 * the cluster DNS the kubelets write into each pod's resolv.conf; the host reaches the Service
 * too, through a node whose kube-proxy masquerades it. The test brings the cluster
 * up and takes it down, and checks that nothing of it is left.
 */
import assert from "node:assert/strict";
import {
  type ControlPlane,
  CRI_IMAGE,
  kubectlOn,
  run,
  script,
  waitFor,
} from "./_cluster.ts";

const KINDS = ["ours", "upstream", "ours"] as const;

const missing = Deno.build.os !== "linux" || Deno.uid() !== 0
  ? "needs root on Linux (network namespaces, containerd, the kubelets)"
  : undefined;

interface PodJson {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { nodeName?: string };
  status: {
    podIP?: string;
    conditions?: { type: string; status: string }[];
  };
}

interface DaemonSetJson {
  status: {
    desiredNumberScheduled?: number;
    numberReady?: number;
  };
}

/** A busybox httpd on port 8080 serving `body` (read from /tmp/www). */
function httpd(body: string): Record<string, unknown> {
  return {
    name: "web",
    image: CRI_IMAGE,
    imagePullPolicy: "IfNotPresent",
    command: [
      "sh",
      "-c",
      `mkdir -p /tmp/www && echo ${body} >/tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www`,
    ],
    ports: [{ containerPort: 8080 }],
    readinessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 1 },
  };
}

/** An HTTP GET with busybox nc (the static busybox's wget crashes on a literal address). */
function get(host: string, port: number): string[] {
  return [
    "sh",
    "-c",
    `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${host} ${port}`,
  ];
}

const ready = (p: PodJson) =>
  p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ??
    false;

async function clusterNodes(
  command: "up" | "down",
): Promise<Record<string, string>> {
  return await script("cluster_nodes.sh", [command], {
    KTS_NODES: KINDS.join(" "),
    KTS_DENO: Deno.execPath(),
  });
}

/** What of the cluster is still on the host: namespaces, links, the root, processes. */
async function leftovers(): Promise<string[]> {
  const left: string[] = [];
  const ns = await run("ip", ["netns", "list"]);
  left.push(
    ...ns.stdout.split("\n").filter((l) => /^ktsmn\d/.test(l)).map((l) =>
      `netns ${l}`
    ),
  );
  const links = await run("ip", ["-o", "link", "show"]);
  left.push(
    ...links.stdout.split("\n").filter((l) => /^\d+: ktsmn/.test(l)).map((l) =>
      `link ${l.split(":")[1]!.trim()}`
    ),
  );
  for (const net of ["10.160.0.0/16", "10.161.0.0/16"]) {
    const routes = await run("ip", ["route", "show", "root", net]);
    if (routes.stdout.trim()) left.push(`route ${routes.stdout.trim()}`);
  }
  if (await Deno.stat("/tmp/kts-mn").then(() => true, () => false)) {
    left.push("/tmp/kts-mn");
  }
  const mounts = await Deno.readTextFile("/proc/self/mounts");
  left.push(
    ...mounts.split("\n").filter((l) => l.includes(" /tmp/kts-mn/")).map((l) =>
      `mount ${l.split(" ")[1]}`
    ),
  );
  for (const h of await Array.fromAsync(Deno.readDir("/sys/fs/cgroup"))) {
    for (const n of [1, 2, 3]) {
      const dir = `/sys/fs/cgroup/${h.name}/ktsmn${n}`;
      if (await Deno.stat(dir).then(() => true, () => false)) {
        left.push(`cgroup ${dir}`);
      }
    }
  }
  for (const p of await Array.fromAsync(Deno.readDir("/proc"))) {
    if (!/^\d+$/.test(p.name)) continue;
    const cmd = await Deno.readTextFile(`/proc/${p.name}/cmdline`).catch(() =>
      ""
    );
    if (cmd.includes("/tmp/kts-mn") || cmd.includes("ktsmn")) {
      left.push(`process ${p.name} ${cmd.replaceAll("\0", " ").slice(0, 80)}`);
    }
  }
  return left;
}

Deno.test({
  name:
    "three nodes (kubelet.ts, upstream, kubelet.ts): a DaemonSet Ready on each, pod-to-pod across nodes, a ClusterIP Service and its DNS name from other nodes",
  ignore: missing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    try {
      await clusterNodes("down");
      const env = await clusterNodes("up");
      const cp: ControlPlane = {
        kubeconfig: env.KUBELET_TS_KUBECONFIG!,
        bootstrapKubeconfig: env.KUBELET_TS_BOOTSTRAP_KUBECONFIG!,
        ca: env.KUBELET_TS_CLUSTER_CA!,
        bin: env.KUBELET_TS_K8S_BIN!,
      };
      const { kubectl, getJson } = kubectlOn(cp);
      const nodes = env.KUBELET_TS_MN_NODES!.split(",");
      assert.equal(nodes.length, KINDS.length);
      const ns = `mn-${crypto.randomUUID().slice(0, 6)}`;
      await kubectl("create", "namespace", ns);
      const apply = async (object: unknown) => {
        const file = await Deno.makeTempFile({ suffix: ".json" });
        try {
          await Deno.writeTextFile(file, JSON.stringify(object));
          await kubectl("apply", "-f", file);
        } finally {
          await Deno.remove(file);
        }
      };
      const exec = (pod: string, command: string[]) =>
        kubectl("-n", ns, "exec", pod, "--", ...command);

      // A DaemonSet: one Ready pod on every node, whichever kubelet runs it.
      await apply({
        apiVersion: "apps/v1",
        kind: "DaemonSet",
        metadata: { name: "web", namespace: ns },
        spec: {
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              terminationGracePeriodSeconds: 1,
              automountServiceAccountToken: false,
              containers: [httpd("web-$(hostname)")],
            },
          },
        },
      });
      const pods = await waitFor("a Ready web pod on every node", async () => {
        const ds = await getJson<DaemonSetJson>("-n", ns, "daemonset", "web");
        if (ds?.status.numberReady !== nodes.length) return undefined;
        const list = await getJson<{ items: PodJson[] }>(
          "-n",
          ns,
          "pods",
          "-l",
          "app=web",
        );
        const byNode = new Map(
          (list?.items ?? []).filter(ready).map((p) => [p.spec.nodeName!, p]),
        );
        return nodes.every((n) => byNode.has(n))
          ? nodes.map((n) => byNode.get(n)!)
          : undefined;
      }, 180_000);
      assert.equal(
        (await getJson<DaemonSetJson>("-n", ns, "daemonset", "web"))?.status
          .desiredNumberScheduled,
        nodes.length,
      );

      // Pod to pod across nodes: each node's pod reaches the next node's pod at its IP.
      for (let i = 0; i < pods.length; i++) {
        const from = pods[i]!;
        const to = pods[(i + 1) % pods.length]!;
        const answer = await exec(
          from.metadata.name,
          get(to.status.podIP!, 8080),
        );
        assert.match(
          answer,
          new RegExp(`^web-${to.metadata.name}$`, "m"),
          `${from.spec.nodeName} → ${to.spec.nodeName} (${to.status.podIP})`,
        );
      }

      // A ClusterIP Service whose one backend runs on the first node, reached from the others.
      await apply({
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          name: "backend",
          namespace: ns,
          labels: { app: "backend" },
        },
        spec: {
          nodeName: nodes[0],
          terminationGracePeriodSeconds: 1,
          automountServiceAccountToken: false,
          containers: [httpd("backend-on-$(hostname)")],
        },
      });
      await apply({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "backend", namespace: ns },
        spec: {
          selector: { app: "backend" },
          ports: [{ port: 80, targetPort: 8080 }],
        },
      });
      const service = await getJson<{ spec: { clusterIP: string } }>(
        "-n",
        ns,
        "service",
        "backend",
      );
      const clusterIP = service!.spec.clusterIP;
      for (const from of pods.filter((p) => p.spec.nodeName !== nodes[0])) {
        // until the backend is Ready and every kube-proxy has synced its endpoint
        const answer = await waitFor(
          `the Service ${clusterIP} from ${from.spec.nodeName}`,
          async () => {
            const out = await exec(from.metadata.name, get(clusterIP, 80));
            return /^backend-on-backend$/m.test(out) ? out : undefined;
          },
        );
        assert.match(answer, /^HTTP\/1\.[01] 200 OK/);
      }

      // From the host, outside the cluster CIDR, through the last node: its kube-proxy
      // masquerades, so the backend's answer comes back through it.
      const fromHost = await waitFor(
        `the Service ${clusterIP} from the host`,
        async () => {
          const r = await fetch(`http://${clusterIP}/`, {
            signal: AbortSignal.timeout(5_000),
          });
          return r.ok ? await r.text() : undefined;
        },
        60_000,
      );
      assert.equal(fromHost.trim(), "backend-on-backend");

      // The Service's name, through the cluster DNS each kubelet puts in the pod's resolv.conf.
      const name = `backend.${ns}.svc.cluster.local`;
      for (const from of pods) {
        const resolv = await exec(from.metadata.name, [
          "cat",
          "/etc/resolv.conf",
        ]);
        assert.match(
          resolv,
          new RegExp(`^nameserver ${env.KUBELET_TS_MN_DNS_IP}$`, "m"),
        );
        const answer = await waitFor(
          `${name} from ${from.spec.nodeName}`,
          async () => {
            const out = await exec(from.metadata.name, ["nslookup", name]);
            return out.includes(`Name:\t${name}`) ? out : undefined;
          },
        );
        assert.match(
          answer,
          new RegExp(`^Address: ${clusterIP.replaceAll(".", "\\.")}$`, "m"),
          `${name} from ${from.spec.nodeName}`,
        );
      }
    } finally {
      await clusterNodes("down");
    }
    assert.deepEqual(await leftovers(), []);
  },
});
