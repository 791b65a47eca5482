/**
 * kubelet.ts joins the local control plane: TLS bootstrap from the
 * bootstrap kubeconfig, Node registration and status from the real containerd's CRI
 * Version/Status, the Lease heartbeat, and NodeRestriction holding for its own identity.
 * Everything is checked through kubectl with the admin kubeconfig. Node names are
 * `kts-ts-<random>`; the Nodes, Leases and CSRs made here are deleted at the end.
 */
import assert from "node:assert/strict";
import {
  ApiStatusError,
  ClientCertificateRotator,
  loadKubeconfig,
  openApiClient,
} from "../../src/api/mod.ts";
import { systemClock } from "../../src/clock/mod.ts";
import { joinCluster } from "../../src/kubelet/join_cluster.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { spawnBundled } from "../ship/_helpers.ts";
import {
  cluster,
  clusterMissing,
  conditionTrue,
  getJson,
  kubectl,
} from "./_cluster.ts";

const CRI_ENDPOINT = Deno.env.get("KUBELET_TS_CRI_ENDPOINT") ?? "";

interface NodeJson {
  metadata: { uid: string; labels: Record<string, string> };
  status: {
    conditions: { type: string; status: string; reason: string }[];
    nodeInfo: Record<string, string>;
    addresses: { type: string; address: string }[];
    capacity: Record<string, string>;
    allocatable: Record<string, string>;
    daemonEndpoints: { kubeletEndpoint: { Port: number } };
    images?: { names: string[] | null; sizeBytes: number }[];
  };
}

interface LeaseJson {
  metadata: { ownerReferences?: { kind: string; name: string; uid: string }[] };
  spec: {
    holderIdentity: string;
    leaseDurationSeconds: number;
    renewTime: string;
  };
}

interface CsrJson {
  metadata: { name: string };
  spec: { username: string; signerName: string; usages: string[] };
  status?: {
    certificate?: string;
    conditions?: { type: string; status: string }[];
  };
}

function randomName(): string {
  return `kts-ts-${crypto.randomUUID().slice(0, 8)}`;
}

/** A non-loopback IPv4 address of this machine for `--node-ip`, if it has one. */
function localNodeIP(): string | undefined {
  return Deno.networkInterfaces().find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.") &&
    !i.address.startsWith("169.254.")
  )?.address;
}

async function poll<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out waiting for ${what}${last ? `: ${last}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The CSRs whose issued certificate is the one in `pairPem`. */
async function csrsIssuing(pairPem: string): Promise<CsrJson[]> {
  const list = await getJson<{ items: CsrJson[] }>("csr");
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/
    .exec(pairPem)?.[0];
  return (list?.items ?? []).filter((c) =>
    c.status?.certificate && cert &&
    atob(c.status.certificate).includes(cert.split("\n")[1]!)
  );
}

async function cleanup(nodes: string[], csrNames: string[]): Promise<void> {
  for (const n of nodes) {
    await kubectl("delete", "node", n, "--ignore-not-found").catch(() => {});
    await kubectl(
      "-n",
      "kube-node-lease",
      "delete",
      "lease",
      n,
      "--ignore-not-found",
    )
      .catch(() => {});
  }
  for (const c of csrNames) {
    await kubectl("delete", "csr", c, "--ignore-not-found").catch(() => {});
  }
}

Deno.test({
  name:
    "kubelet.ts bootstraps, registers a Ready Node from containerd's status, renews its Lease, NodeRestriction holds, and a restart reuses its certificate and Node",
  ignore: clusterMissing !== undefined || CRI_ENDPOINT === "",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const node = randomName();
    const other = `${node}-other`;
    const dir = await Deno.makeTempDir({ prefix: `${node}-` });
    const stop = new AbortController();
    const runtime = createCriRuntime({
      endpoint: CRI_ENDPOINT,
      timeoutMs: 10_000,
    });
    const nodeIP = localNodeIP();
    let csrNames: string[] = [];
    let joined: Awaited<ReturnType<typeof joinCluster>> | undefined;
    const logger = new CaptureLogger();
    try {
      const joinContext = {
        nodeName: node,
        signal: stop.signal,
        config: {
          nodeLeaseDurationSeconds: 4, // renew every second
          nodeStatusUpdateFrequency: "1s",
          nodeStatusReportFrequency: "1m",
          rotateCertificates: true,
          registerWithTaints: [{
            key: "kts.test/dedicated",
            value: "x",
            effect: "NoSchedule",
          }],
        },
        flags: {
          kubeconfig: `${dir}/kubelet.conf`,
          bootstrapKubeconfig: cluster.bootstrapKubeconfig,
          certDir: `${dir}/pki`,
          rootDir: `${dir}/root`,
          nodeLabels: { "node.kubernetes.io/kts-test": "yes" },
          ...(nodeIP ? { nodeIP } : {}),
          reportedVersion: "v1.34.0+kubelet.ts.test",
        },
      };
      joined = await joinCluster(
        { runtime, clock: systemClock, logger },
        joinContext,
      );

      // rotateCertificates: the rotator waits for 70-90 % of the new certificate's life.
      assert.ok(
        logger.messages().includes("Waiting to rotate the client certificate"),
      );

      // TLS bootstrap: the CSR made with the bootstrap token was approved and issued, and
      // its certificate is the one stored under --cert-dir.
      const pair = await Deno.readTextFile(
        `${dir}/pki/kubelet-client-current.pem`,
      );
      const issued = await csrsIssuing(pair);
      csrNames = issued.map((c) => c.metadata.name);
      assert.equal(issued.length, 1);
      assert.match(issued[0]!.metadata.name, /^node-csr-/);
      assert.match(issued[0]!.spec.username, /^system:bootstrap:/);
      assert.equal(
        issued[0]!.spec.signerName,
        "kubernetes.io/kube-apiserver-client-kubelet",
      );
      assert.deepEqual(issued[0]!.spec.usages, [
        "digital signature",
        "client auth",
      ]);
      assert.ok(conditionTrue(issued[0], "Approved"));

      const ready = await poll("the Node to turn Ready", async () => {
        const n = await getJson<NodeJson>("node", node);
        return n && conditionTrue(n, "Ready") ? n : undefined;
      });
      assert.equal(ready.metadata.labels["kubernetes.io/hostname"], node);
      assert.equal(ready.metadata.labels["kubernetes.io/os"], "linux");
      assert.equal(ready.metadata.labels["node.kubernetes.io/kts-test"], "yes");
      assert.equal(
        ready.status.nodeInfo.kubeletVersion,
        "v1.34.0+kubelet.ts.test",
      );
      // As upstream prints it: containerd's "1.6.20~ds1" reads "containerd://1.6.20".
      assert.match(
        ready.status.nodeInfo.containerRuntimeVersion ?? "",
        /^containerd:\/\/\d+\.\d+\.\d+[^~]*$/,
      );
      assert.ok(ready.status.nodeInfo.machineID);
      assert.ok(ready.status.nodeInfo.systemUUID);
      assert.equal(ready.status.nodeInfo.operatingSystem, "linux");
      assert.deepEqual(
        ready.status.conditions.map((c) => `${c.type}=${c.status}`),
        [
          "MemoryPressure=False",
          "DiskPressure=False",
          "PIDPressure=False",
          "Ready=True",
        ],
      );
      assert.equal(ready.status.capacity.pods, "110");
      assert.ok(ready.status.capacity["ephemeral-storage"]);
      assert.ok(ready.status.allocatable.memory);
      assert.equal(ready.status.daemonEndpoints.kubeletEndpoint.Port, 10250);
      // containerd's images, largest first, as upstream lists them.
      const images = ready.status.images ?? [];
      assert.ok(images.length > 0, "no images in node status");
      assert.ok(
        images.every((i, n) =>
          n === 0 || images[n - 1]!.sizeBytes >= i.sizeBytes
        ),
      );
      // at most 5 names each; an image the runtime knows by ID only has none (upstream
      // lists it too, and the API server drops the empty list)
      assert.ok(images.every((i) => (i.names ?? []).length <= 5));
      assert.ok(images.some((i) => (i.names ?? []).length >= 1));
      if (nodeIP) {
        assert.deepEqual(ready.status.addresses, [
          { type: "InternalIP", address: nodeIP },
          { type: "Hostname", address: node },
        ]);
      }
      // The registration taint stays; the node lifecycle controller may have added
      // node.kubernetes.io/not-ready while the first status said NotReady, and takes it
      // away on its next pass after Ready, so wait for that pass.
      const wanted = [{
        key: "kts.test/dedicated",
        value: "x",
        effect: "NoSchedule",
      }];
      let taints: unknown;
      await poll("the registration taint alone", async () => {
        taints = JSON.parse(
          await kubectl("get", "node", node, "-o", "jsonpath={.spec.taints}"),
        );
        return JSON.stringify(taints) === JSON.stringify(wanted)
          ? true
          : undefined;
      }, 30_000).catch(() => undefined);
      assert.deepEqual(taints, wanted);

      // The Lease: held by the node, owned by its Node, renewed about every second.
      const first = await poll("the Lease with its owner", async () => {
        const l = await getJson<LeaseJson>(
          "lease",
          "-n",
          "kube-node-lease",
          node,
        );
        return l?.metadata.ownerReferences?.length ? l : undefined;
      });
      assert.equal(first.spec.holderIdentity, node);
      assert.equal(first.spec.leaseDurationSeconds, 4);
      assert.deepEqual(
        first.metadata.ownerReferences!.map((o) =>
          `${o.kind}/${o.name}/${o.uid}`
        ),
        [`Node/${node}/${ready.metadata.uid}`],
      );
      const renewed: string[] = [first.spec.renewTime];
      for (let i = 0; i < 2; i++) {
        renewed.push(
          await poll("the Lease renewTime to advance", async () => {
            const l = await getJson<LeaseJson>(
              "lease",
              "-n",
              "kube-node-lease",
              node,
            );
            const t = l?.spec.renewTime;
            return t && t > renewed.at(-1)! ? t : undefined;
          }, 10_000),
        );
      }
      const gaps = renewed.slice(1).map((t, i) =>
        Date.parse(t) - Date.parse(renewed[i]!)
      );
      assert.ok(gaps.every((g) => g >= 500 && g <= 5000), `gaps ${gaps}`);

      // NodeRestriction: with its own identity the kubelet may patch its Node, not another.
      const otherFile = `${dir}/other.json`;
      await Deno.writeTextFile(
        otherFile,
        JSON.stringify({
          apiVersion: "v1",
          kind: "Node",
          metadata: { name: other },
        }),
      );
      await kubectl("create", "-f", otherFile);
      using own = openApiClient(
        { clock: systemClock },
        await loadKubeconfig(`${dir}/kubelet.conf`),
      );
      const patch = { metadata: { labels: { "kts.test/touched": "yes" } } };
      await own.api.patchNodeStatus(node, patch);
      await assert.rejects(own.api.patchNodeStatus(other, patch), (e) => {
        assert.ok(e instanceof ApiStatusError);
        assert.equal(e.code, 403);
        assert.ok(
          e.message.includes(
            `node "${node}" is not allowed to modify node "${other}"`,
          ),
          e.message,
        );
        return true;
      });

      // A restart with the written kubeconfig: its certificate is still valid, so no new
      // CSR; the existing Node is reconciled (same UID) and its Lease renewed again.
      await joined.stop();
      joined = undefined;
      const before = renewed.at(-1)!;
      joined = await joinCluster(
        { runtime, clock: systemClock, logger },
        joinContext,
      );
      assert.ok(
        logger.messages().includes(
          "Kubeconfig has a valid client identity; no bootstrap needed",
        ),
      );
      assert.equal((await csrsIssuing(pair)).length, 1);
      await poll("the Lease to be renewed after the restart", async () => {
        const l = await getJson<LeaseJson>(
          "lease",
          "-n",
          "kube-node-lease",
          node,
        );
        return l && l.spec.renewTime > before ? l : undefined;
      }, 10_000);
      const again = await getJson<NodeJson>("node", node);
      assert.equal(again?.metadata.uid, ready.metadata.uid);
      assert.ok(
        logger.messages().includes("Node was previously registered"),
      );

      // Certificate rotation with the node's own identity: the renewal CSR, made by
      // system:node:<node>, is approved and issued, and the new pair works.
      const rotated: string[] = [];
      const rotator = new ClientCertificateRotator({
        clock: systemClock,
        logger,
        api: own.api,
        onRotated: (p) => {
          rotated.push(p);
        },
      }, {
        nodeName: node,
        certDir: `${dir}/pki`,
        currentPairPem: pair,
        pollIntervalMs: 250,
      });
      await rotator.rotate(stop.signal);
      assert.equal(rotated.length, 1);
      const renewal = await csrsIssuing(rotated[0]!);
      csrNames.push(...renewal.map((c) => c.metadata.name));
      assert.equal(renewal.length, 1);
      assert.equal(renewal[0]!.spec.username, `system:node:${node}`);
      assert.equal(
        await Deno.readTextFile(`${dir}/pki/kubelet-client-current.pem`),
        rotated[0],
      );
      own.reconnect({
        ...own.connection,
        certPem: rotated[0]!,
        keyPem: rotated[0]!,
      });
      await own.api.patchNodeStatus(node, {
        metadata: { labels: { "kts.test/rotated": "yes" } },
      });
      assert.equal(
        (await getJson<NodeJson>("node", node))?.metadata
          .labels["kts.test/rotated"],
        "yes",
      );
    } catch (e) {
      // The kubelet's own log explains most failures.
      const log = logger.records.map((r) =>
        `${r.severity} ${r.msg} ${JSON.stringify(r.fields)}`
      ).join("\n");
      throw new Error(`${(e as Error).message}\nkubelet log:\n${log}`, {
        cause: e,
      });
    } finally {
      stop.abort();
      await joined?.stop();
      await runtime.close();
      await cleanup([node, other], csrNames);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
  }
  return text;
}

Deno.test({
  name:
    "the bundled kubelet under exactly its --dry-run permission lists bootstraps, turns Ready and renews its Lease (simulated runtime)",
  ignore: clusterMissing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const node = randomName();
    const dir = await Deno.makeTempDir({ prefix: `${node}-` });
    const port = 20000 + Math.floor(Math.random() * 10000);
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      [
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "kind: KubeletConfiguration",
        "containerRuntimeEndpoint: sim://default",
        "healthzPort: 0",
        "address: 127.0.0.1",
        `port: ${port}`,
        "nodeLeaseDurationSeconds: 4",
        "nodeStatusUpdateFrequency: 1s",
        "",
      ].join("\n"),
    );
    const args = [
      "--config",
      `${dir}/config.yaml`,
      "--root-dir",
      `${dir}/root`,
      "--kubeconfig",
      `${dir}/kubelet.conf`,
      "--bootstrap-kubeconfig",
      cluster.bootstrapKubeconfig,
      "--cert-dir",
      `${dir}/pki`,
      "--hostname-override",
      node,
    ];
    // The grants the kubelet says this configuration needs, and nothing more.
    const { grants, child } = await spawnBundled(dir, args);
    assert.ok(
      grants.some((g) => g.startsWith("--allow-net=") && g.includes(":16443")),
    );
    const stderr = readAll(child.stderr);
    let csrNames: string[] = [];
    try {
      const ready = await poll("the Node to turn Ready", async () => {
        const n = await getJson<NodeJson>("node", node);
        return n && conditionTrue(n, "Ready") ? n : undefined;
      }, 90_000);
      // --root-dir is created at start, so its filesystem is measured.
      assert.ok(ready.status.capacity["ephemeral-storage"]);
      assert.equal(ready.status.daemonEndpoints.kubeletEndpoint.Port, port);
      const first = await poll(
        "the Lease",
        () => getJson<LeaseJson>("lease", "-n", "kube-node-lease", node),
      );
      assert.equal(first.spec.holderIdentity, node);
      await poll("the Lease renewTime to advance", async () => {
        const l = await getJson<LeaseJson>(
          "lease",
          "-n",
          "kube-node-lease",
          node,
        );
        return l && l.spec.renewTime > first.spec.renewTime ? l : undefined;
      }, 10_000);
      const conf = await Deno.readTextFile(`${dir}/kubelet.conf`);
      assert.match(conf, /client-certificate: ".*kubelet-client-current\.pem"/);
      csrNames = (await csrsIssuing(
        await Deno.readTextFile(`${dir}/pki/kubelet-client-current.pem`),
      )).map((c) => c.metadata.name);
      assert.equal(csrNames.length, 1);
    } finally {
      child.kill("SIGTERM");
      const status = await child.status;
      const err = await stderr;
      await cleanup([node], csrNames);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      assert.equal(status.code, 0, err);
      // Nothing of API server mode ran into a missing grant.
      const denied = err.split("\n").filter((l) =>
        /NotCapable|Requires \w+ access/.test(l) &&
        /api-server|node-status|node-lease|kubeconfig|pki/.test(l)
      );
      assert.deepEqual(denied, []);
    }
  },
});
