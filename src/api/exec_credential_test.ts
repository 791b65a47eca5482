import assert from "node:assert/strict";
import { FakeClock } from "../clock/testing.ts";
import {
  ExecCredentialProvider,
  ExecPluginError,
  type ExecRunner,
  parseExecConfig,
  parseExecOutput,
  resolveExecCommand,
} from "./exec_credential.ts";
import { loadKubeconfig } from "./kubeconfig.ts";
import { createRestClient } from "./rest_client.ts";
import { writeExecPlugin } from "./testing.ts";

const V1 = "client.authentication.k8s.io/v1";
const WHERE = {
  kubeconfigPath: "/etc/k/kubelet.conf",
  userName: "u",
  dir: "/etc/k",
  cluster: { server: "https://api:6443", caPem: "CA" },
};

function credential(status: Record<string, unknown>, apiVersion = V1) {
  return JSON.stringify({ kind: "ExecCredential", apiVersion, status });
}

Deno.test("parseExecConfig() validates as clientcmd does and builds KUBERNETES_EXEC_INFO", () => {
  const config = parseExecConfig({
    command: "bin/plugin",
    args: ["a"],
    env: [{ name: "X", value: "1" }],
    apiVersion: V1,
    interactiveMode: "Never",
    provideClusterInfo: true,
  }, {
    ...WHERE,
    cluster: {
      ...WHERE.cluster,
      extensions: [{
        name: "client.authentication.k8s.io/exec",
        extension: { audience: "x" },
      }],
    },
  });
  assert.equal(config.command, "/etc/k/bin/plugin");
  assert.deepEqual(config.args, ["a"]);
  assert.deepEqual(config.env, { X: "1" });
  assert.deepEqual(JSON.parse(config.execInfo), {
    kind: "ExecCredential",
    apiVersion: V1,
    spec: {
      cluster: {
        server: "https://api:6443",
        "certificate-authority-data": btoa("CA"),
        config: { audience: "x" },
      },
      interactive: false,
    },
  });
  const beta = parseExecConfig({
    command: "plugin",
    apiVersion: "client.authentication.k8s.io/v1beta1",
  }, WHERE);
  assert.equal(beta.command, "plugin");
  assert.equal(beta.interactiveMode, "IfAvailable");
  assert.deepEqual(JSON.parse(beta.execInfo).spec, { interactive: false });
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ apiVersion: V1, interactiveMode: "Never" }, /exec\.command must be set/],
    [{ command: "p", apiVersion: "v9" }, /apiVersion "v9" is not supported/],
    [{ command: "p", apiVersion: V1 }, /interactiveMode must be set/],
    [
      { command: "p", apiVersion: V1, interactiveMode: "Always" },
      /needs a terminal/,
    ],
    [
      { command: "p", apiVersion: V1, interactiveMode: "Never", env: [{}] },
      /env\[0\]/,
    ],
  ];
  for (const [raw, message] of bad) {
    assert.throws(
      () => parseExecConfig(raw, WHERE),
      (e: unknown) =>
        e instanceof ExecPluginError && message.test(e.message) &&
        e.message.startsWith(`kubeconfig "/etc/k/kubelet.conf" user "u"`),
    );
  }
});

Deno.test("resolveExecCommand() keeps bare names for PATH and a slash in relative paths", () => {
  assert.equal(resolveExecCommand("get-token", "/etc/k"), "get-token");
  assert.equal(resolveExecCommand("/usr/bin/t", "/etc/k"), "/usr/bin/t");
  assert.equal(resolveExecCommand("./bin/t", "/etc/k"), "/etc/k/bin/t");
  assert.equal(resolveExecCommand("./t", "."), "./t");
  assert.equal(resolveExecCommand("../t", "conf"), "./t");
});

Deno.test("parseExecOutput() takes a token or a cert/key pair and rejects what client-go rejects", () => {
  const config = { ...WHERE, apiVersion: V1, command: "p" };
  assert.deepEqual(
    parseExecOutput(
      credential({ token: "t", expirationTimestamp: "2026-01-01T00:10:00Z" }),
      config,
    ),
    { token: "t", expiresAt: Date.UTC(2026, 0, 1, 0, 10) },
  );
  assert.deepEqual(
    parseExecOutput(
      credential({ clientCertificateData: "C", clientKeyData: "K" }),
      config,
    ),
    { certPem: "C", keyPem: "K" },
  );
  const bad: [string, RegExp][] = [
    ["not json", /printed no ExecCredential JSON/],
    [JSON.stringify({ kind: "Pod" }), /not kind ExecCredential/],
    [
      credential({ token: "t" }, "client.authentication.k8s.io/v1beta1"),
      /configured to use API version .*v1, plugin returned version .*v1beta1/,
    ],
    [
      JSON.stringify({ kind: "ExecCredential", apiVersion: V1 }),
      /didn't return a status/,
    ],
    [credential({}), /didn't return a token or cert\/key pair/],
    [credential({ clientKeyData: "K" }), /only certificate or private key/],
    [
      credential({ token: "t", expirationTimestamp: "soon" }),
      /not an RFC 3339 time/,
    ],
  ];
  for (const [stdout, message] of bad) {
    assert.throws(
      () => parseExecOutput(stdout, config),
      (e: unknown) =>
        e instanceof ExecPluginError && message.test(e.message) &&
        e.message.includes('exec plugin "p"'),
    );
  }
});

Deno.test("ExecCredentialProvider runs the plugin once, again after expiry or a 401 on the credential in use", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  let runs = 0;
  const seenEnv: Record<string, string>[] = [];
  const run: ExecRunner = (_command, _args, env) => {
    runs++;
    seenEnv.push(env);
    return Promise.resolve({
      code: 0,
      stdout: credential({
        token: `t${runs}`,
        expirationTimestamp: new Date(clock.now() + 60_000).toISOString(),
      }),
    });
  };
  const provider = new ExecCredentialProvider(
    { clock, run },
    parseExecConfig({
      command: "p",
      apiVersion: V1,
      interactiveMode: "Never",
      env: [{ name: "A", value: "b" }],
    }, WHERE),
  );
  const [a, b] = await Promise.all([provider.get(), provider.get()]);
  assert.equal(runs, 1);
  assert.equal(a, b);
  assert.equal(seenEnv[0]!.A, "b");
  assert.equal(
    JSON.parse(seenEnv[0]!.KUBERNETES_EXEC_INFO!).kind,
    "ExecCredential",
  );
  await clock.advance(30_000);
  assert.equal((await provider.get()).token, "t1");
  await clock.advance(31_000);
  assert.equal((await provider.get()).token, "t2");
  provider.unauthorized(a); // a stale credential's 401 does not drop the new one
  assert.equal((await provider.get()).token, "t2");
  provider.unauthorized(await provider.get());
  assert.equal((await provider.get()).token, "t3");
  assert.equal(runs, 3);
});

async function pluginScript(body: string): Promise<{ dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "h8-exec-" });
  await writeExecPlugin(dir, {
    script: body,
    server: "https://127.0.0.1:1",
    args: ["one"],
    env: { GREETING: "hi" },
  });
  return { dir };
}

Deno.test("a kubeconfig exec plugin script's token reaches the API server; a 401 runs it again", async () => {
  const { dir } = await pluginScript(
    [
      `n=$(cat "$(dirname "$0")/runs" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$(dirname "$0")/runs"`,
      `server=$(echo "$KUBERNETES_EXEC_INFO" | sed 's/.*"server":"\\([^"]*\\)".*/\\1/')`,
      `printf '{"kind":"ExecCredential","apiVersion":"${V1}","status":{"token":"%s-%s-%s-%s"}}' "$1" "$GREETING" "$server" "$n"`,
    ].join("\n"),
  );
  try {
    const conn = await loadKubeconfig(`${dir}/kubeconfig`);
    const seen: string[] = [];
    const fetch = ((_url: string, init?: RequestInit) => {
      seen.push(new Headers(init?.headers).get("Authorization") ?? "");
      return Promise.resolve(
        seen.length === 2
          ? new Response("{}", { status: 401 })
          : Response.json({}),
      );
    }) as typeof globalThis.fetch;
    using rest = createRestClient({ clock: new FakeClock() }, conn, { fetch });
    await rest.request({ method: "GET", path: "/api" });
    await assert.rejects(rest.request({ method: "GET", path: "/api" }));
    await rest.request({ method: "GET", path: "/api" });
    assert.deepEqual(seen, [
      "Bearer one-hi-https://127.0.0.1:1-1",
      "Bearer one-hi-https://127.0.0.1:1-1",
      "Bearer one-hi-https://127.0.0.1:1-2",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failing or garbling exec plugin gives an error naming the kubeconfig and the plugin", async () => {
  for (
    const [body, message] of [
      ["exit 3", /executable failed with exit code 3/],
      ["echo '{oops'", /printed no ExecCredential JSON/],
    ] as const
  ) {
    const { dir } = await pluginScript(body);
    try {
      const conn = await loadKubeconfig(`${dir}/kubeconfig`);
      using rest = createRestClient({ clock: new FakeClock() }, conn, {
        fetch: () => Promise.resolve(Response.json({})),
      });
      await assert.rejects(
        rest.request({ method: "GET", path: "/api" }),
        (e: unknown) =>
          e instanceof ExecPluginError && message.test(e.message) &&
          e.message.includes(`kubeconfig "${dir}/kubeconfig" user "u"`) &&
          e.message.includes(`exec plugin "${dir}/plugin.sh"`),
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});
