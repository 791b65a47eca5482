/**
 * The kubelet API under exactly the grants the permission plan gives its configuration (plus
 * read access to this repository, for the modules): it self-signs into the cert dir, binds,
 * and answers client-certificate requests without any `NotCapable`.
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
    containerRuntimeEndpoint: "sim://",
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
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...flags,
      "tests/server/testdata/serve_api.ts",
      JSON.stringify(config),
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
  } finally {
    await child.stdin.close();
    await lines.cancel();
    const { code } = await child.status;
    const log = await stderr;
    await Deno.remove(dir, { recursive: true });
    assert.doesNotMatch(log, /NotCapable|Requires \w+ access/, log);
    assert.equal(code, 0, log);
  }
});
