import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import type { NodeAddress } from "../api/mod.ts";
import { FakeApiServer } from "../api/testing.ts";
import { FakeClock } from "../clock/testing.ts";
import { CaptureLogger } from "../log/testing.ts";
import { EKU, makeCertificate } from "../server/testing.ts";
import {
  servingAltNames,
  splitPair,
  startServingCertificates,
} from "./serving_certificates.ts";

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(check(), `${what} not reached`);
}

function pemDer(pem: string): Uint8Array {
  const b64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function contains(haystack: Uint8Array, needle: number[]): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) {
      if (haystack[i + j] !== needle[j]) continue outer;
    }
    return true;
  }
  return false;
}

Deno.test("servingAltNames() takes DNS names and IPs from the node addresses, once each, sorted, and nothing without an IP", () => {
  const addresses: NodeAddress[] = [
    { type: "InternalIP", address: "10.0.0.2" },
    { type: "ExternalIP", address: "192.0.2.1" },
    { type: "InternalIP", address: "10.0.0.2" },
    { type: "Hostname", address: "node-b" },
    { type: "InternalDNS", address: "node-b.internal" },
    { type: "ExternalDNS", address: "" },
    { type: "InternalIP", address: "fd00::2" },
  ];
  assert.deepEqual(servingAltNames(addresses), {
    dnsNames: ["node-b", "node-b.internal"],
    ips: ["10.0.0.2", "192.0.2.1", "fd00::2"],
  });
  assert.deepEqual(
    servingAltNames([{ type: "Hostname", address: "10.1.1.1" }]),
    { dnsNames: [], ips: ["10.1.1.1"] },
  );
  assert.equal(
    servingAltNames([{ type: "Hostname", address: "node-b" }]),
    undefined,
  );
  assert.equal(servingAltNames([]), undefined);
});

Deno.test("splitPair() separates the certificates from the key", () => {
  const a = makeCertificate({ commonName: "a" });
  const pair = splitPair(`${a.certPem}${a.keyPem}`);
  assert.ok(pair);
  assert.equal(new X509Certificate(pair.certPem).subject, "CN=a");
  assert.match(pair.keyPem, /^-----BEGIN PRIVATE KEY-----/);
  assert.equal(splitPair(a.certPem), undefined);
});

Deno.test("startServingCertificates() requests a kubelet-serving certificate for the node's addresses, serves it once issued and rotates at the jittered deadline", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-serving-" });
  const api = new FakeApiServer();
  const clock = new FakeClock();
  const logger = new CaptureLogger();
  const stop = new AbortController();
  let addresses: NodeAddress[] | undefined;
  const issue = (name: string, lifetimeMs: number) => {
    const csr = api.csrs.get(name)!;
    const cert = makeCertificate({
      commonName: "system:node:h3-node",
      organizations: ["system:nodes"],
      extKeyUsages: [EKU.serverAuth],
      notBefore: clock.now(),
      notAfter: clock.now() + lifetimeMs,
    });
    csr.status = {
      conditions: [{ type: "Approved", status: "True" }],
      certificate: btoa(cert.certPem),
    };
    return cert.certPem;
  };
  try {
    const source = await startServingCertificates({
      clock,
      logger,
      csr: api,
      addresses: () => addresses,
    }, {
      nodeName: "h3-node",
      certDir: `${dir}/pki`,
      signal: stop.signal,
      random: () => 0.5,
    });
    const seen: string[] = [];
    source.watch((pair) => seen.push(pair.certPem));
    assert.equal(source.current(), undefined);
    // No address yet: nothing is requested, and it is tried again after the back-off.
    await until(
      () => logger.messages().some((m) => m.includes("serving certificate")),
      "the failed attempt",
    );
    assert.equal(api.csrs.size, 0);
    addresses = [
      { type: "InternalIP", address: "10.0.0.7" },
      { type: "Hostname", address: "h3-node" },
    ];
    await clock.advance(1000);
    await until(() => api.csrs.size === 1, "the first request");
    const [name, csr] = [...api.csrs.entries()][0]!;
    assert.equal(csr.spec.signerName, "kubernetes.io/kubelet-serving");
    assert.deepEqual(csr.spec.usages, ["digital signature", "server auth"]);
    const request = pemDer(atob(csr.spec.request));
    assert.ok(contains(request, [0x87, 4, 10, 0, 0, 7]), "IP SAN");
    assert.ok(
      contains(request, [0x82, 7, ...new TextEncoder().encode("h3-node")]),
      "DNS SAN",
    );
    // Until approved: no certificate.
    await clock.advance(1000);
    assert.equal(source.current(), undefined);
    const first = issue(name, 100_000);
    const issuedAt = clock.now();
    await clock.advance(1000);
    await until(() => seen.length === 1, "the first certificate");
    assert.equal(source.current()?.certPem.trim(), first.trim());
    const stored = await Deno.readTextFile(
      `${dir}/pki/kubelet-server-current.pem`,
    );
    assert.match(stored, /BEGIN CERTIFICATE[\s\S]*BEGIN PRIVATE KEY/);
    const files = [...Deno.readDirSync(`${dir}/pki`)].map((e) => e.name);
    assert.ok(
      files.some((f) =>
        /^kubelet-server-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/.test(f)
      ),
      files.join(","),
    );
    assert.ok(!files.includes("kubelet-server.key.tmp"));
    // random 0.5 → at 80 % of the 100 s lifetime, not before.
    await clock.advance(issuedAt + 79_000 - clock.now());
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(api.csrs.size, 1);
    await clock.advance(issuedAt + 80_000 - clock.now());
    await until(() => api.csrs.size === 2, "the rotation request");
    stop.abort();
    await source.done;
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("startServingCertificates() reuses a valid current pair after a restart and requests nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-serving-" });
  const api = new FakeApiServer();
  const clock = new FakeClock(Date.now());
  const stop = new AbortController();
  try {
    const cert = makeCertificate({
      commonName: "system:node:h3-node",
      extKeyUsages: [EKU.serverAuth],
    });
    await Deno.mkdir(`${dir}/pki`);
    await Deno.writeTextFile(
      `${dir}/pki/kubelet-server-current.pem`,
      cert.certPem + cert.keyPem,
    );
    const source = await startServingCertificates({
      clock,
      logger: new CaptureLogger(),
      csr: api,
      addresses: () => [{ type: "InternalIP", address: "10.0.0.7" }],
    }, { nodeName: "h3-node", certDir: `${dir}/pki`, signal: stop.signal });
    assert.equal(source.current()?.certPem.trim(), cert.certPem.trim());
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(api.csrs.size, 0);
    stop.abort();
    await source.done;
  } finally {
    stop.abort();
    await Deno.remove(dir, { recursive: true });
  }
});
