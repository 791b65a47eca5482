/**
 * What a started kubelet exposes on the network, and that trickling clients do not starve the
 * others. The listener census reads the kubelet subprocess's own sockets from /proc (an exact
 * port scan of one process: a connect scan of the machine would also find the other programs
 * on it), after `main.ts` started with a configuration that only names free ports and a client
 * CA, everything else the defaults.
 */
import assert from "node:assert/strict";
import { makeCertificate, trickleHeaders } from "../../src/server/testing.ts";
import { ALLOW_ALL, freePort, get, OPEN_CONFIG, startApi } from "./_helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

interface Listening {
  proto: string;
  address: string;
  port: number;
}

/** `/proc/net/tcp`-style hex address → dotted IPv4 or compressed-enough IPv6 text. */
function hexAddress(hex: string): string {
  if (hex.length === 8) {
    return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(".");
  }
  const words: string[] = [];
  for (let i = 0; i < 32; i += 8) {
    const le = hex.slice(i, i + 8);
    const be = le.slice(6, 8) + le.slice(4, 6) + le.slice(2, 4) +
      le.slice(0, 2);
    words.push(be.slice(0, 4), be.slice(4, 8));
  }
  const text = words.map((w) => parseInt(w, 16).toString(16)).join(":");
  return text === "0:0:0:0:0:0:0:0" ? "::" : text;
}

/** The listening TCP sockets and bound UDP sockets of process `pid`. */
async function listeningSockets(pid: number): Promise<Listening[]> {
  const inodes = new Set<string>();
  for await (const entry of Deno.readDir(`/proc/${pid}/fd`)) {
    try {
      const link = await Deno.readLink(`/proc/${pid}/fd/${entry.name}`);
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m) inodes.add(m[1]!);
    } catch {
      // closed in between
    }
  }
  const found: Listening[] = [];
  for (const proto of ["tcp", "tcp6", "udp", "udp6"]) {
    const text = await Deno.readTextFile(`/proc/${pid}/net/${proto}`);
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) continue;
      // TCP state 0A is LISTEN; any bound UDP socket counts.
      if (proto.startsWith("tcp") && f[3] !== "0A") continue;
      const [addr, port] = f[1]!.split(":");
      found.push({
        proto,
        address: hexAddress(addr!),
        port: parseInt(port!, 16),
      });
    }
  }
  return found;
}

function kill(child: Deno.ChildProcess): void {
  try {
    child.kill("SIGTERM");
  } catch {
    // already exited
  }
}

Deno.test({
  name:
    "a default start listens only on the API port and 127.0.0.1's healthz port",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "kts-h11-listen-" });
    const ca = makeCertificate({
      commonName: "ca",
      ca: true,
      extKeyUsages: [],
    });
    await Deno.writeTextFile(`${dir}/ca.crt`, ca.certPem);
    await Deno.mkdir(`${dir}/manifests`);
    const port = freePort();
    const healthzPort = freePort();
    await Deno.writeTextFile(
      `${dir}/config.yaml`,
      [
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "kind: KubeletConfiguration",
        `staticPodPath: ${dir}/manifests`,
        "containerRuntimeEndpoint: sim://default",
        `podLogsDir: ${dir}/logs`,
        `port: ${port}`,
        `healthzPort: ${healthzPort}`,
        `authentication: {x509: {clientCAFile: ${dir}/ca.crt}, webhook: {enabled: false}}`,
        "authorization: {mode: AlwaysAllow}",
        "",
      ].join("\n"),
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "main.ts",
        "--config",
        `${dir}/config.yaml`,
        `--root-dir=${dir}/root`,
        `--cert-dir=${dir}/pki`,
        "--hostname-override=h11-listen-node",
      ],
      cwd: ROOT,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const watchdog = setTimeout(() => kill(child), 60_000);
    const reader = child.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    let stderr = "";
    try {
      while (
        !(stderr.includes('"Serving the kubelet API"') &&
          stderr.includes('"Serving healthz"'))
      ) {
        const { value, done } = await reader.read();
        if (done) break;
        stderr += value;
      }
      // Let anything started after the listeners (sync loop, managers) settle.
      await new Promise((r) => setTimeout(r, 1_000));
      const sockets = await listeningSockets(child.pid);
      const key = (s: Listening) => `${s.proto} ${s.address}:${s.port}`;
      assert.deepEqual(
        sockets.map(key).sort(),
        [
          // Node's listener on the unspecified address takes the dual-stack socket.
          ...sockets.filter((s) => s.port === port).map(key),
          `tcp 127.0.0.1:${healthzPort}`,
        ].sort(),
        stderr,
      );
      const api = sockets.filter((s) => s.port === port);
      assert.equal(api.length, 1, "one API socket");
      assert.ok(["0.0.0.0", "::"].includes(api[0]!.address), key(api[0]!));
      // The healthz port answers on loopback only.
      const healthz = await fetch(`http://127.0.0.1:${healthzPort}/healthz`);
      assert.equal(await healthz.text(), "ok");
      const nodeAddress = Deno.networkInterfaces().find((i) =>
        i.family === "IPv4" && !i.address.startsWith("127.")
      )?.address;
      if (nodeAddress) {
        await assert.rejects(
          Deno.connect({ hostname: nodeAddress, port: healthzPort }),
        );
        using conn = await Deno.connect({ hostname: nodeAddress, port });
        assert.ok(conn.remoteAddr);
      }
    } finally {
      kill(child);
      for (;;) {
        const { done } = await reader.read();
        if (done) break;
      }
      clearTimeout(watchdog);
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("clients trickling their headers byte by byte do not delay other clients", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kts-h11-loris-" });
  try {
    await using api = await startApi({
      certDir: `${dir}/pki`,
      ...OPEN_CONFIG,
    }, {
      reviewClient: ALLOW_ALL,
      limits: { headersTimeoutMs: 2_000, maxHeaderBytes: 8_192 },
    });
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    const conns = await Promise.all(
      Array.from(
        { length: 40 },
        () =>
          Deno.connectTls({
            hostname: "127.0.0.1",
            port: api.port,
            caCerts: [caPem],
          }),
      ),
    );
    const trickles = trickleHeaders(conns);
    try {
      const latencies: number[] = [];
      for (let i = 0; i < 10; i++) {
        const t = Date.now();
        assert.equal((await get(`${api.url}/healthz`, { caPem })).body, "ok");
        latencies.push(Date.now() - t);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(
        Math.max(...latencies) < 1_000,
        `healthz answered within 1 s (${latencies.join(", ")} ms)`,
      );
      const closedAfter = await Promise.all(trickles);
      assert.ok(
        Math.max(...closedAfter) < 6_000,
        `tricklers cut off by the header timeout (${
          Math.max(...closedAfter)
        } ms)`,
      );
    } finally {
      for (const conn of conns) {
        try {
          conn.close();
        } catch {
          // closed by the server
        }
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
