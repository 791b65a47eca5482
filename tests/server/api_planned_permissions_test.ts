/**
 * The kubelet API under exactly the grants the permission plan gives its configuration (plus
 * read access to this repository, for the modules): it self-signs into the cert dir, binds,
 * answers client-certificate requests and proxies an exec upgrade to a streaming server on a
 * random loopback port (as containerd's is) and lists and reads `/var/log` under `/logs/`,
 * without any `NotCapable`.
 */
import assert from "node:assert/strict";
import { planPermissions, toDenoFlags } from "../../src/permissions/mod.ts";
import { makeCertificate } from "../../src/server/testing.ts";
import { freePort } from "./_helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("the kubelet API runs under the planned permissions", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-api-perm-" });
  const ca = makeCertificate({ commonName: "ca", ca: true, extKeyUsages: [] });
  const client = makeCertificate({ commonName: "admin", issuer: ca });
  await Deno.writeTextFile(`${dir}/ca.crt`, ca.certPem);
  const port = freePort();
  const kubelet = {
    address: "127.0.0.1",
    port,
    authentication: { x509: { clientCAFile: `${dir}/ca.crt` } },
    containerRuntimeEndpoint: `unix://${dir}/cri.sock`,
    podLogsDir: `${dir}/logs`,
    healthzPort: 0,
  };
  const plan = await planPermissions({
    config: kubelet,
    flags: { rootDir: `${dir}/root`, certDir: `${dir}/pki` },
  }, { readFile: () => undefined });
  const flags = toDenoFlags(plan).map((flag) =>
    flag.startsWith("--allow-read=") ? `${flag},${ROOT}` : flag
  );
  const config = {
    address: "127.0.0.1",
    port,
    certDir: `${dir}/pki`,
    clientCAFile: `${dir}/ca.crt`,
    anonymousAuth: false,
    webhookAuthn: { enabled: false, cacheTtlMs: 120_000 },
    authorizationMode: "AlwaysAllow",
    webhookAuthz: { allowedTtlMs: 300_000, deniedTtlMs: 30_000 },
  };
  const streaming = fakeStreamingServer();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...flags,
      "tests/server/testdata/serve_api.ts",
      JSON.stringify(config),
      `http://127.0.0.1:${streaming.port}/exec/token`,
    ],
    cwd: ROOT,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const { value } = await lines.read();
    assert.match(
      value ?? "",
      /^listening \d+/,
      await Promise.race([stderr, Promise.resolve("")]),
    );
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    using http = Deno.createHttpClient({
      caCerts: [caPem],
      cert: client.certPem,
      key: client.keyPem,
    });
    for (const path of ["/pods", "/healthz", "/metrics"]) {
      const r = await fetch(`https://127.0.0.1:${port}${path}`, {
        client: http,
      });
      await r.body?.cancel();
      assert.equal(r.status, 200, path);
    }
    // /logs/ under the plan's read grant of /var/log: the listing and a file in it.
    const listing = await fetch(`https://127.0.0.1:${port}/logs/`, {
      client: http,
    });
    assert.equal(listing.status, 200);
    assert.match(await listing.text(), /^<!doctype html>/);
    const file = [...Deno.readDirSync("/var/log")].find((e) => e.isFile);
    if (file) {
      const r = await fetch(
        `https://127.0.0.1:${port}/logs/${encodeURIComponent(file.name)}`,
        { client: http },
      );
      await r.body?.cancel();
      assert.equal(r.status, 200, file.name);
    }
    const echoed = await upgradeAndEcho(port, caPem, client, "ping");
    assert.match(echoed, /^HTTP\/1\.1 101 [^]*\r\n\r\nping$/);
  } finally {
    streaming.close();
    await child.stdin.close();
    await lines.cancel();
    const { code } = await child.status;
    const log = await stderr;
    await Deno.remove(dir, { recursive: true });
    assert.doesNotMatch(log, /NotCapable|Requires \w+ access/, log);
    assert.equal(code, 0, log);
  }
});

/** A streaming server on a random loopback port: answers 101, then echoes. */
function fakeStreamingServer(): { port: number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(4096);
        let head = "";
        while (!head.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) return;
          head += new TextDecoder().decode(buf.subarray(0, n));
        }
        await conn.write(new TextEncoder().encode(
          "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n",
        ));
        await conn.readable.pipeTo(conn.writable);
      })().catch(() => {});
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close: () => listener.close(),
  };
}

/** An exec upgrade through the kubelet API; everything read back after sending `data`. */
async function upgradeAndEcho(
  port: number,
  caPem: string,
  cert: { certPem: string; keyPem: string },
  data: string,
): Promise<string> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port,
    caCerts: [caPem],
    cert: cert.certPem,
    key: cert.keyPem,
  });
  try {
    await conn.write(new TextEncoder().encode(
      "POST /exec/ns/pod/c?command=true&output=1 HTTP/1.1\r\nHost: x\r\n" +
        "Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n",
    ));
    let text = "";
    const buf = new Uint8Array(4096);
    let sent = false;
    while (!text.endsWith(data)) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (!sent && text.includes("\r\n\r\n")) {
        sent = true;
        await conn.write(new TextEncoder().encode(data));
      }
    }
    return text;
  } finally {
    conn.close();
  }
}
