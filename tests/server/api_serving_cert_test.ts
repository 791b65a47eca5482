/**
 * The kubelet API's serving certificate from certificate signing requests
 * (`serverTLSBootstrap`): the live listener fails handshakes until it has a certificate and
 * swaps each new one in without a restart (in-process); against the local control plane
 * (scripts/cluster_env.sh), the kubelet-serving CSR of a joined node, approved with kubectl,
 * is what :10250 presents, verified with the cluster CA, and a restart reuses it.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import { systemClock } from "../../src/clock/mod.ts";
import { joinCluster } from "../../src/kubelet/join_cluster.ts";
import { startServingCertificates } from "../../src/kubelet/serving_certificates.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { FakeRuntime } from "../../src/runtime/testing.ts";
import type { CertificateSource, TlsPair } from "../../src/server/mod.ts";
import { EKU, makeCertificate } from "../../src/server/testing.ts";
import {
  cluster,
  clusterMissing,
  deleteNode,
  getJson,
  kubectl,
  testJoinContext,
} from "../cluster/_cluster.ts";
import { ALLOW_ALL, get, OPEN_CONFIG, startApi } from "./_helpers.ts";

/** A TLS handshake to `host`:`port` verifying with `caPem`: the served leaf, or the error. */
function handshake(
  port: number,
  caPem: string,
  host = "127.0.0.1",
): Promise<{ cert?: X509Certificate; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, ca: caPem }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      resolve({ cert: new X509Certificate(raw) });
    });
    socket.on("error", (e) => {
      socket.destroy();
      resolve({ error: e.message });
    });
  });
}

/** A source the test sets by hand. */
function manualSource(): CertificateSource & { set(pair: TlsPair): void } {
  let current: TlsPair | undefined;
  const watchers = new Set<(pair: TlsPair) => void>();
  return {
    current: () => current,
    watch(onChange) {
      watchers.add(onChange);
      return () => watchers.delete(onChange);
    },
    set(pair) {
      current = pair;
      for (const w of watchers) w(pair);
    },
  };
}

Deno.test("the kubelet API listener fails handshakes until it has a serving certificate, then serves each new one without a restart", async () => {
  const ca = makeCertificate({
    commonName: "serving-ca",
    ca: true,
    extKeyUsages: [],
  });
  const leaf = (cn: string) =>
    makeCertificate({
      commonName: cn,
      issuer: ca,
      extKeyUsages: [EKU.serverAuth],
      altNames: ["127.0.0.1"],
    });
  const dir = await Deno.makeTempDir({ prefix: "kts-h3-serving-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.crt`, ca.certPem);
    const source = manualSource();
    await using api = await startApi({
      ...OPEN_CONFIG,
      certDir: `${dir}/pki`,
      clientCAFile: `${dir}/ca.crt`,
    }, { servingCertificates: source, reviewClient: ALLOW_ALL });
    const before = await handshake(api.port, ca.certPem);
    assert.equal(before.cert, undefined);
    assert.ok(before.error);
    // Nothing self-signed was written in its place.
    await assert.rejects(() => Deno.stat(`${dir}/pki/kubelet.crt`));

    const first = leaf("first");
    source.set(first);
    assert.equal(
      (await handshake(api.port, ca.certPem)).cert?.subject,
      "CN=first",
    );
    const client = makeCertificate({ commonName: "alice", issuer: ca });
    // Client certificates are still asked for after the swap.
    const who = await get(`${api.url}/pods`, {
      caPem: ca.certPem,
      cert: client,
    });
    assert.equal(who.status, 200);

    source.set(leaf("second"));
    assert.equal(
      (await handshake(api.port, ca.certPem)).cert?.subject,
      "CN=second",
    );
    assert.equal(
      (await get(`${api.url}/pods`, { caPem: ca.certPem, cert: client }))
        .status,
      200,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

interface CsrJson {
  metadata: { name: string; creationTimestamp: string };
  spec: {
    signerName: string;
    usages: string[];
    username: string;
    request: string;
  };
  status?: { certificate?: string };
}

Deno.test({
  name:
    "serverTLSBootstrap: the node's kubelet-serving CSR, approved with kubectl, is what the kubelet API presents, and a restart reuses it",
  ignore: clusterMissing !== undefined,
  async fn() {
    const node = `h3-serving-${crypto.randomUUID().slice(0, 6)}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-h3-serving-e2e-" });
    const stop = new AbortController();
    const logger = new CaptureLogger();
    const caPem = await Deno.readTextFile(cluster.ca);
    const csrNames: string[] = [];
    let joined: Awaited<ReturnType<typeof joinCluster>> | undefined;
    const mine = async () => {
      const list = await getJson<{ items: CsrJson[] }>("csr");
      return (list?.items ?? []).filter((c) =>
        c.spec.username === `system:node:${node}` &&
        c.spec.signerName === "kubernetes.io/kubelet-serving"
      );
    };
    const serveOnce = async (signal: AbortSignal) => {
      const source = await startServingCertificates({
        clock: systemClock,
        logger,
        csr: joined!.csr,
        addresses: () => joined!.agent.reporter.node?.status?.addresses,
      }, {
        nodeName: node,
        certDir: `${dir}/pki`,
        pollIntervalMs: 200,
        signal,
      });
      return source;
    };
    // A node IP the status reports (loopback is refused) and the listener binds.
    const nodeIP = Deno.networkInterfaces().find((i) =>
      i.family === "IPv4" && !i.address.startsWith("127.") &&
      !i.address.startsWith("169.254.")
    )?.address ?? "";
    const context = testJoinContext(node, dir, stop.signal);
    try {
      assert.ok(nodeIP, "a non-loopback IPv4 address");
      joined = await joinCluster(
        { runtime: new FakeRuntime(), clock: systemClock, logger },
        {
          ...context,
          flags: { ...context.flags, nodeIP },
        },
      );
      const firstRun = new AbortController();
      const source = await serveOnce(firstRun.signal);
      await using api = await startApi({
        ...OPEN_CONFIG,
        address: nodeIP,
        certDir: `${dir}/pki`,
      }, { servingCertificates: source, reviewClient: ALLOW_ALL });
      let csrs: CsrJson[] = [];
      for (let i = 0; i < 100 && csrs.length === 0; i++) {
        await new Promise((r) =>
          setTimeout(r, 100)
        );
        csrs = await mine();
      }
      assert.equal(csrs.length, 1, "one kubelet-serving CSR");
      const csr = csrs[0]!;
      csrNames.push(csr.metadata.name);
      assert.deepEqual(csr.spec.usages, ["digital signature", "server auth"]);
      // Not approved by anyone yet: the listener is up and handshakes fail.
      assert.ok((await handshake(api.port, caPem, nodeIP)).error);

      const approvedAt = Date.now();
      await kubectl("certificate", "approve", csr.metadata.name);
      let served: X509Certificate | undefined;
      while (!served && Date.now() - approvedAt < 20_000) {
        served = (await handshake(api.port, caPem, nodeIP)).cert;
        if (!served) await new Promise((r) => setTimeout(r, 50));
      }
      const tookMs = Date.now() - approvedAt;
      assert.ok(served, "the issued certificate is served");
      // deno-lint-ignore no-console
      console.log(`approve → served in ${tookMs} ms`);
      assert.equal(served.subject, `O=system:nodes\nCN=system:node:${node}`);
      assert.ok(
        (served.subjectAltName ?? "").includes(`IP Address:${nodeIP}`),
        served.subjectAltName,
      );
      assert.match(served.subjectAltName ?? "", new RegExp(`DNS:${node}`));
      assert.ok(served.verify(new X509Certificate(caPem).publicKey));
      const issued = (await mine())[0]!.status?.certificate ?? "";
      assert.equal(
        new X509Certificate(atob(issued)).fingerprint256,
        served.fingerprint256,
      );
      firstRun.abort();
      await source.done;

      // A restart: the stored pair is served at once and nothing new is requested.
      const secondRun = new AbortController();
      const again = await serveOnce(secondRun.signal);
      await using api2 = await startApi({
        ...OPEN_CONFIG,
        address: nodeIP,
        certDir: `${dir}/pki`,
      }, { servingCertificates: again, reviewClient: ALLOW_ALL });
      assert.equal(
        (await handshake(api2.port, caPem, nodeIP)).cert?.fingerprint256,
        served.fingerprint256,
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await mine()).length, 1);
      secondRun.abort();
      await again.done;
    } catch (e) {
      const log = logger.records.map((r) =>
        `${r.severity} ${r.msg} ${JSON.stringify(r.fields)}`
      ).join("\n");
      throw new Error(`${(e as Error).message}\nlog:\n${log}`, { cause: e });
    } finally {
      stop.abort();
      await joined?.stop();
      for (const name of csrNames) {
        await kubectl("delete", "csr", name).catch(() => {});
      }
      await deleteNode(node);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
