/**
 * A `--kubeconfig` whose user is an exec credential plugin, against the shared control plane:
 * a plugin printing a client certificate and key lets kubelet.ts register a Ready Node, and
 * a plugin printing a ServiceAccount token makes the API server see that ServiceAccount.
 */
import assert from "node:assert/strict";
import { ApiStatusError, connectApiServer } from "../../src/api/mod.ts";
import {
  EXEC_PLUGIN_API_VERSION,
  writeExecPlugin,
} from "../../src/api/testing.ts";
import { systemClock } from "../../src/clock/mod.ts";
import { joinCluster } from "../../src/kubelet/join_cluster.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import {
  clusterMissing,
  conditionTrue,
  CRI_ENDPOINT,
  deleteNode,
  getJson,
  kubectl,
  waitFor,
} from "./_cluster.ts";

interface RawKubeconfig {
  clusters: { cluster: Record<string, string> }[];
  users: { user: Record<string, string> }[];
}

/** The admin kubeconfig's server, CA and client pair, all as data. */
async function adminIdentity() {
  const raw = JSON.parse(
    await kubectl(
      "config",
      "view",
      "--raw",
      "--minify",
      "--flatten",
      "-o",
      "json",
    ),
  ) as RawKubeconfig;
  const c = raw.clusters[0]!.cluster;
  const u = raw.users[0]!.user;
  return {
    server: c.server!,
    caData: c["certificate-authority-data"]!,
    cert: atob(u["client-certificate-data"]!),
    key: atob(u["client-key-data"]!),
  };
}

/** Writes `status` as the plugin's answer and a kubeconfig that runs it; returns its path. */
async function execKubeconfig(
  dir: string,
  server: string,
  caData: string,
  status: Record<string, string>,
): Promise<string> {
  await Deno.writeTextFile(
    `${dir}/credential.json`,
    JSON.stringify({
      kind: "ExecCredential",
      apiVersion: EXEC_PLUGIN_API_VERSION,
      status,
    }),
  );
  return await writeExecPlugin(dir, {
    script:
      `echo run >> "$(dirname "$0")/runs"\ncat "$(dirname "$0")/credential.json"`,
    server,
    caData,
  });
}

async function pluginRuns(dir: string): Promise<number> {
  return (await Deno.readTextFile(`${dir}/runs`)).trim().split("\n").length;
}

Deno.test({
  name:
    "an exec plugin's client certificate lets kubelet.ts register a Ready Node; its token is who the API server sees",
  ignore: clusterMissing !== undefined || CRI_ENDPOINT === "",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const node = `h8-exec-${crypto.randomUUID().slice(0, 8)}`;
    const dir = await Deno.makeTempDir({ prefix: `${node}-` });
    const stop = new AbortController();
    const logger = new CaptureLogger();
    let joined: Awaited<ReturnType<typeof joinCluster>> | undefined;
    try {
      const admin = await adminIdentity();
      const kubeconfig = await execKubeconfig(dir, admin.server, admin.caData, {
        clientCertificateData: admin.cert,
        clientKeyData: admin.key,
      });
      joined = await joinCluster({
        runtime: createCriRuntime({
          endpoint: CRI_ENDPOINT,
          timeoutMs: 10_000,
        }),
        clock: systemClock,
        logger,
      }, {
        nodeName: node,
        signal: stop.signal,
        config: {
          nodeLeaseDurationSeconds: 4,
          nodeStatusUpdateFrequency: "1s",
          nodeStatusReportFrequency: "1m",
        },
        flags: { kubeconfig, rootDir: `${dir}/root`, nodeIP: "127.0.0.1" },
      });
      await waitFor("the Node to turn Ready", async () => {
        const n = await getJson("node", node);
        return conditionTrue(n as never, "Ready") ? true : undefined;
      }, 60_000);
      // One run serves every request: the certificate has no expiry in the answer.
      assert.equal(await pluginRuns(dir), 1);

      // A ServiceAccount token: the API server names the ServiceAccount when it refuses.
      const token = (await kubectl(
        "-n",
        "default",
        "create",
        "token",
        "default",
        "--duration=10m",
      )).trim();
      const tokenDir = `${dir}/token`;
      await Deno.mkdir(tokenDir);
      const tokenKubeconfig = await execKubeconfig(
        tokenDir,
        admin.server,
        admin.caData,
        { token },
      );
      using conn = await connectApiServer({ clock: systemClock, logger }, {
        nodeName: node,
        kubeconfigPath: tokenKubeconfig,
      });
      await assert.rejects(
        conn.api.getNode(node),
        (e: unknown) =>
          e instanceof ApiStatusError && e.code === 403 &&
          e.message.includes("system:serviceaccount:default:default"),
      );
    } finally {
      stop.abort();
      await joined?.stop().catch(() => {});
      await deleteNode(node);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
