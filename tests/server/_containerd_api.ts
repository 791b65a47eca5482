/**
 * The kubelet API of a containerd e2e kubelet (tests/pod/_containerd_e2e.ts) on 127.0.0.1 and
 * a free port: x509 client certificates from a CA made on the spot, AlwaysAllow, statuses
 * from the e2e's record. Dispose to stop it and remove its files.
 */
import { systemClock } from "../../src/clock/mod.ts";
import { runKubeletApi } from "../../src/kubelet/serve_kubelet_api.ts";
import { makeCertificate, type TestPair } from "../../src/server/testing.ts";
import { type E2e, waitFor } from "../pod/_containerd_e2e.ts";
import { freePort } from "./_helpers.ts";

/** A serving kubelet API and a client pair it trusts. */
export interface ContainerdApi extends AsyncDisposable {
  port: number;
  /** The self-signed serving certificate, to trust. */
  caPem: string;
  client: TestPair;
}

/** Starts the API and waits until it serves. */
export async function serveContainerdApi(e: E2e): Promise<ContainerdApi> {
  const dir = await Deno.makeTempDir({ prefix: "kts-api-cri-" });
  const ca = makeCertificate({ commonName: "ca", ca: true, extKeyUsages: [] });
  const client = makeCertificate({ commonName: "admin", issuer: ca });
  await Deno.writeTextFile(`${dir}/ca.crt`, ca.certPem);
  const ac = new AbortController();
  const port = freePort();
  const api = runKubeletApi({
    clock: systemClock,
    logger: e.logger,
    kubelet: e.kubelet,
    statuses: {
      getPodStatus: (uid: string) => {
        const pod = e.kubelet.podConfig.pods().find((p) =>
          p.metadata.uid === uid
        );
        const name = pod?.metadata.name?.replace(`-${e.node}`, "");
        return name ? e.statuses(name).at(-1) : undefined;
      },
    },
    runtime: e.runtime,
  }, {
    config: {
      address: "127.0.0.1",
      port,
      podLogsDir: e.logsDir,
      authentication: {
        x509: { clientCAFile: `${dir}/ca.crt` },
        webhook: { enabled: false },
      },
      authorization: { mode: "AlwaysAllow" },
    },
    flags: { certDir: `${dir}/pki` },
    nodeName: e.node,
    resyncIntervalMs: 60_000,
    signal: ac.signal,
  });
  const stop = async () => {
    ac.abort();
    await api;
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await waitFor(
      "the API listening",
      () =>
        e.logger.messages().includes("Serving the kubelet API")
          ? true
          : undefined,
    );
    const caPem = await Deno.readTextFile(`${dir}/pki/kubelet.crt`);
    return { port, caPem, client, [Symbol.asyncDispose]: stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
