/**
 * The kubelet API over real TLS on loopback with certificates made on the spot: the
 * self-signed serving pair, client certificate authentication (trusted, untrusted, expired,
 * wrong usage), `tlsMinVersion` and the limits against slow or huge clients.
 */
import assert from "node:assert/strict";
import { EKU, makeCertificate } from "../../src/server/testing.ts";
import { ALLOW_ALL, get, OPEN_CONFIG, startApi } from "./_helpers.ts";

const CA = makeCertificate({
  commonName: "client-ca",
  ca: true,
  extKeyUsages: [],
});
const OTHER_CA = makeCertificate({
  commonName: "evil-ca",
  ca: true,
  extKeyUsages: [],
});

async function withCertDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "kts-api-tls-" });
  try {
    await Deno.writeTextFile(`${dir}/ca.crt`, CA.certPem);
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("runApiServer() self-signs under the cert dir and authenticates client certificates", async () => {
  await withCertDir(async (dir) => {
    await using api = await startApi({
      certDir: `${dir}/pki`,
      clientCAFile: `${dir}/ca.crt`,
    });
    const servingPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    assert.equal(
      (await Deno.stat(`${dir}/pki/kubelet.key`)).mode! & 0o777,
      0o600,
    );
    const caPem = servingPem;
    const now = Date.now();
    const good = makeCertificate({
      commonName: "alice",
      organizations: ["ops"],
      issuer: CA,
    });
    const untrusted = makeCertificate({
      commonName: "mallory",
      issuer: OTHER_CA,
    });
    const expired = makeCertificate({
      commonName: "old",
      issuer: CA,
      notBefore: now - 10 * 86_400_000,
      notAfter: now - 86_400_000,
    });
    const wrongUsage = makeCertificate({
      commonName: "server",
      issuer: CA,
      extKeyUsages: [EKU.serverAuth],
    });
    const pods = await get(`${api.url}/pods`, { caPem, cert: good });
    assert.equal(pods.status, 200);
    assert.equal(JSON.parse(pods.body).kind, "PodList");
    assert.equal(
      (await get(`${api.url}/healthz`, { caPem, cert: good })).body,
      "ok",
    );
    for (
      const [what, cert] of [["untrusted", untrusted], ["expired", expired], [
        "wrong usage",
        wrongUsage,
      ]] as const
    ) {
      assert.deepEqual(
        await get(`${api.url}/pods`, { caPem, cert }),
        { status: 401, body: "Unauthorized\n" },
        what,
      );
    }
    assert.equal((await get(`${api.url}/pods`, { caPem })).status, 401);
    // Path tricks, sent as raw bytes (fetch would resolve them), are refused before anything
    // else; a plain path without credentials is a 401.
    for (
      const target of [
        "/stats/%2e%2e/pods",
        "/stats/../exec/a/b/c",
        "//pods",
        "/stats%2f..%2fpods",
      ]
    ) {
      assert.match(
        await rawGet(api.port, caPem, target),
        /^HTTP\/1\.1 400 /,
        target,
      );
    }
    assert.match(await rawGet(api.port, caPem, "/pods"), /^HTTP\/1\.1 401 /);
  });
});

Deno.test("runApiServer() reuses the pair in the cert dir and honours tlsMinVersion", async () => {
  await withCertDir(async (dir) => {
    let first: string;
    {
      await using _api = await startApi({
        certDir: `${dir}/pki`,
        ...OPEN_CONFIG,
      }, { reviewClient: ALLOW_ALL });
      first = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    }
    await using api = await startApi({
      certDir: `${dir}/pki`,
      ...OPEN_CONFIG,
      tlsMinVersion: "VersionTLS13",
    }, { reviewClient: ALLOW_ALL });
    assert.equal(await Deno.readTextFile(`${dir}/pki/kubelet.crt`), first);
    assert.equal((await get(`${api.url}/pods`, { caPem: first })).status, 200);
    const curl = (args: string[]) =>
      new Deno.Command("curl", {
        args: [
          "-s",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code}",
          "--cacert",
          `${dir}/pki/kubelet.crt`,
          ...args,
          `${api.url}/healthz`,
        ],
        stdout: "piped",
        stderr: "null",
      }).output();
    const tls12 = await curl(["--tls-max", "1.2"]);
    assert.notEqual(tls12.code, 0, "a TLS 1.2 client is refused");
    const tls13 = await curl(["--tlsv1.3"]);
    assert.equal(new TextDecoder().decode(tls13.stdout), "200");
  });
});

Deno.test("runApiServer() closes slow and oversized clients while /healthz keeps answering", async () => {
  await withCertDir(async (dir) => {
    await using api = await startApi({
      certDir: `${dir}/pki`,
      ...OPEN_CONFIG,
    }, {
      reviewClient: ALLOW_ALL,
      limits: {
        handshakeTimeoutMs: 1_000,
        headersTimeoutMs: 1_500,
        maxHeaderBytes: 8_192,
      },
    });
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    // 50 connections that never start TLS, 20 that never finish their headers.
    const silent = await Promise.all(
      Array.from(
        { length: 50 },
        () => Deno.connect({ hostname: "127.0.0.1", port: api.port }),
      ),
    );
    const slow = await Promise.all(Array.from({ length: 20 }, async () => {
      const conn = await Deno.connectTls({
        hostname: "127.0.0.1",
        port: api.port,
        caCerts: [caPem],
      });
      await conn.write(
        new TextEncoder().encode(
          "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ",
        ),
      );
      return conn;
    }));
    try {
      assert.equal((await get(`${api.url}/healthz`, { caPem })).body, "ok");
      const started = Date.now();
      const closed = async (conn: Deno.Conn) => {
        const buffer = new Uint8Array(1024);
        try {
          while ((await conn.read(buffer)) !== null) { /* drain */ }
        } catch {
          // reset: closed too
        }
        return Date.now() - started;
      };
      const times = await Promise.all([...silent, ...slow].map(closed));
      assert.ok(
        Math.max(...times) < 6_000,
        `all closed within 6 s (${Math.max(...times)} ms)`,
      );
      assert.equal((await get(`${api.url}/healthz`, { caPem })).body, "ok");
      await assert.rejects(fetchWithHugeHeader(`${api.url}/healthz`, caPem));
      assert.equal((await get(`${api.url}/healthz`, { caPem })).body, "ok");
    } finally {
      for (const conn of [...silent, ...slow]) {
        try {
          conn.close();
        } catch {
          // already closed
        }
      }
    }
  });
});

async function fetchWithHugeHeader(url: string, caPem: string): Promise<void> {
  using client = Deno.createHttpClient({ caCerts: [caPem] });
  const response = await fetch(url, {
    client,
    headers: { "x-big": "a".repeat(20_000) },
  });
  await response.body?.cancel();
  if (response.status >= 400) throw new Error(`status ${response.status}`);
}

/** Sends `GET <target>` byte for byte over TLS and returns the response head. */
async function rawGet(
  port: number,
  caPem: string,
  target: string,
): Promise<string> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port,
    caCerts: [caPem],
  });
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      ),
    );
    let text = "";
    const buffer = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    return text;
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the server
    }
  }
}

Deno.test("runApiServer() refuses anonymous requests with AlwaysAllow", async () => {
  await withCertDir(async (dir) => {
    await assert.rejects(
      startApi({
        certDir: `${dir}/pki`,
        anonymousAuth: true,
        authorizationMode: "AlwaysAllow",
      }),
      (e: unknown) =>
        e instanceof TypeError &&
        /^Refusing to serve the kubelet API on "127\.0\.0\.1:\d+" with authentication\.anonymous\.enabled and authorization\.mode AlwaysAllow/
          .test(e.message),
    );
    // Nothing was written or bound.
    await assert.rejects(Deno.stat(`${dir}/pki`), Deno.errors.NotFound);
  });
});

Deno.test("runApiServer() checks TLS settings and authentication before writing a certificate", async () => {
  await withCertDir(async (dir) => {
    const certDir = `${dir}/pki`;
    await assert.rejects(
      startApi({ certDir, ...OPEN_CONFIG, tlsMinVersion: "VersionTLS99" }, {
        reviewClient: ALLOW_ALL,
      }),
      RangeError,
    );
    await assert.rejects(
      startApi({ certDir, ...OPEN_CONFIG, tlsCipherSuites: ["TLS_FAKE"] }, {
        reviewClient: ALLOW_ALL,
      }),
      /unknown cipher suite "TLS_FAKE"/,
    );
    // Webhook authorization without a kubeconfig (the standalone default).
    await assert.rejects(
      startApi({ certDir, authorizationMode: "Webhook" }),
      /needs a kubeconfig/,
    );
    await assert.rejects(Deno.stat(certDir), Deno.errors.NotFound);
    // A valid list is accepted but not applied (Deno's TLS ignores it), and says so.
    await using api = await startApi({
      certDir,
      ...OPEN_CONFIG,
      tlsCipherSuites: ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
    }, { reviewClient: ALLOW_ALL });
    assert.ok(
      api.logger.records.some((r) =>
        r.severity === "warn" && /tlsCipherSuites is not applied/.test(r.msg)
      ),
    );
  });
});

Deno.test("runApiServer() follows an intermediate the client sends with its certificate", async () => {
  await withCertDir(async (dir) => {
    const intermediate = makeCertificate({
      commonName: "intermediate",
      ca: true,
      extKeyUsages: [],
      issuer: CA,
    });
    const leaf = makeCertificate({
      commonName: "via-intermediate",
      organizations: ["g1"],
      issuer: intermediate,
    });
    const asked: Array<{ user: string; groups: string[] }> = [];
    await using api = await startApi({
      certDir: `${dir}/pki`,
      clientCAFile: `${dir}/ca.crt`,
      authorizationMode: "Webhook",
    }, {
      reviewClient: {
        ...ALLOW_ALL,
        reviewAccess: (spec) => {
          asked.push({ user: spec.user, groups: spec.groups });
          return Promise.resolve({ allowed: true });
        },
      },
    });
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    const chain = {
      certPem: leaf.certPem + intermediate.certPem,
      keyPem: leaf.keyPem,
    };
    assert.equal(
      (await get(`${api.url}/pods`, { caPem, cert: chain })).status,
      200,
    );
    assert.deepEqual(asked, [{
      user: "via-intermediate",
      groups: ["g1", "system:authenticated"],
    }]);
    // Without the intermediate the chain does not reach the CA.
    assert.equal(
      (await get(`${api.url}/pods`, { caPem, cert: leaf })).status,
      401,
    );
  });
});
