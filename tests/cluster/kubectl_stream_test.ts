/**
 * kubectl against kubelet.ts through the API server (local control plane, real containerd):
 * `kubectl exec` with piped stdin and its exit code, `kubectl attach`, `kubectl port-forward`
 * to busybox httpd fetched with fetch(), `kubectl logs` (--tail, -f, --previous) and
 * `kubectl get --raw /api/v1/nodes/<node>/proxy/stats/summary` and `/metrics`. The API server
 * reaches the kubelet API with its kubelet client certificate; every request is authorized
 * by a SubjectAccessReview.
 */
import assert from "node:assert/strict";
import { endpoint, IMAGE } from "../pod/_containerd_e2e.ts";
import { streamingContainers } from "../server/_stream_client.ts";
import { startApiKubelet } from "./_api_kubelet.ts";
import {
  cluster,
  clusterMissing,
  getJson,
  kubectl,
  readingStdout,
  readTextUntil,
  waitFor,
} from "./_cluster.ts";

function kubectlCommand(args: string[], stdin: "piped" | "null" = "null") {
  return new Deno.Command(`${cluster.bin}/kubectl`, {
    args: ["--kubeconfig", cluster.kubeconfig, ...args],
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

/** Reads a child's stdout until `done(text)` holds, then stops the child. */
async function readUntil(
  child: Deno.ChildProcess,
  done: (text: string) => boolean,
  what: string,
): Promise<string> {
  const stderr = new Response(child.stderr).text();
  const text = await readingStdout(
    child,
    30_000,
    (reader) => readTextUntil(reader, done),
  );
  assert.ok(done(text), `${what}: ${text}\n${await stderr}`);
  return text;
}

interface PodJson {
  status: {
    phase?: string;
    containerStatuses?: {
      name: string;
      restartCount: number;
      state: Record<string, unknown>;
    }[];
  };
}

Deno.test({
  name:
    "kubectl exec, attach, port-forward, logs and get --raw reach kubelet.ts through the API server",
  ignore: clusterMissing !== undefined || endpoint === "",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const k = await startApiKubelet("h3-stream", { criEndpoint: endpoint });
    const ns = k.node;
    try {
      const manifest = JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", namespace: ns },
        spec: {
          nodeName: k.node,
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 1,
          containers: [...streamingContainers(IMAGE), {
            name: "crasher",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: ["sh", "-c", "echo run-$RANDOM; sleep 1; exit 1"],
          }],
        },
      });
      const path = await Deno.makeTempFile({ suffix: ".json" });
      await Deno.writeTextFile(path, manifest);
      await kubectl("apply", "-f", path);
      await Deno.remove(path);
      await waitFor("httpd and talker running", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "web");
        const running = (p?.status.containerStatuses ?? []).filter((c) =>
          c.state.running
        ).map((c) => c.name);
        return running.includes("httpd") && running.includes("talker")
          ? p
          : undefined;
      }, 60_000);

      // exec: stdin piped in, stdout back, the exit code propagated.
      const exec = kubectlCommand([
        "-n",
        ns,
        "exec",
        "-i",
        "web",
        "-c",
        "talker",
        "--",
        "sh",
        "-c",
        "read x; echo got $x; exit 3",
      ], "piped").spawn();
      const writer = exec.stdin.getWriter();
      await writer.write(new TextEncoder().encode("hello\n"));
      await writer.close();
      const execOut = await exec.output();
      const execStderr = new TextDecoder().decode(execOut.stderr);
      assert.equal(
        new TextDecoder().decode(execOut.stdout),
        "got hello\n",
        `${execStderr}\n${
          JSON.stringify(k.logger.records.filter((r) => r.severity !== "info"))
        }`,
      );
      assert.equal(execOut.code, 3, execStderr);
      const rounds: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const ok = await kubectlCommand([
          "-n",
          ns,
          "exec",
          "web",
          "-c",
          "talker",
          "--",
          "true",
        ]).output();
        rounds.push(performance.now() - started);
        assert.equal(ok.code, 0, new TextDecoder().decode(ok.stderr));
      }
      const execMs = Math.round(rounds.sort((a, b) => a - b)[2]!);

      // attach: the running process's output.
      await readUntil(
        kubectlCommand(["-n", ns, "attach", "web", "-c", "talker"]).spawn(),
        (t) => /tick \d+\n[^]*tick \d+\n/.test(t),
        "kubectl attach",
      );

      // port-forward: httpd's page through a local port.
      const forward = kubectlCommand([
        "-n",
        ns,
        "port-forward",
        "pod/web",
        ":8080",
      ]).spawn();
      const reader = forward.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      const banner = await readTextUntil(
        reader,
        (t) => /Forwarding from 127\.0\.0\.1:(\d+)/.test(t),
      );
      const localPort = /127\.0\.0\.1:(\d+)/.exec(banner)?.[1];
      try {
        assert.ok(localPort, banner);
        const page = await fetch(`http://127.0.0.1:${localPort}/index.html`);
        assert.equal(page.status, 200);
        assert.equal(await page.text(), "served-by-httpd\n");
      } finally {
        forward.kill("SIGTERM");
        await reader.cancel().catch(() => {});
        await forward.stderr.cancel().catch(() => {});
        await forward.status;
      }

      // logs: --tail, -f, --previous.
      const tail = await kubectl(
        "-n",
        ns,
        "logs",
        "web",
        "-c",
        "talker",
        "--tail=1",
      );
      assert.match(tail, /^tick \d+\n$/);
      await readUntil(
        kubectlCommand([
          "-n",
          ns,
          "logs",
          "-f",
          "--tail=1",
          "web",
          "-c",
          "talker",
        ])
          .spawn(),
        (t) => (t.match(/tick \d+\n/g) ?? []).length >= 3,
        "kubectl logs -f",
      );
      await waitFor("crasher restarted", async () => {
        const p = await getJson<PodJson>("pod", "-n", ns, "web");
        const c = p?.status.containerStatuses?.find((c) =>
          c.name === "crasher"
        );
        return c && c.restartCount >= 1 ? c : undefined;
      }, 40_000);
      const previous = await kubectl(
        "-n",
        ns,
        "logs",
        "web",
        "-c",
        "crasher",
        "--previous",
      );
      assert.match(previous, /^run-\d+\n$/);

      // The node's proxy subresource: stats and metrics.
      const summary = JSON.parse(
        await kubectl(
          "get",
          "--raw",
          `/api/v1/nodes/${k.node}/proxy/stats/summary`,
        ),
      );
      assert.equal(summary.node.nodeName, k.node);
      const web = summary.pods.find((p: { podRef: { name: string } }) =>
        p.podRef.name === "web"
      );
      assert.ok(web, JSON.stringify(summary.pods));
      assert.equal(web.podRef.namespace, ns);
      assert.ok(
        web.containers.some((c: { name: string }) => c.name === "httpd"),
      );
      const metrics = await kubectl(
        "get",
        "--raw",
        `/api/v1/nodes/${k.node}/proxy/metrics`,
      );
      assert.match(
        metrics,
        new RegExp(`^kubelet_node_name\\{node="${k.node}"\\} 1$`, "m"),
      );
      // deno-lint-ignore no-console
      console.log(`kubectl exec -- true round trip p50 of 5: ${execMs} ms`);
    } finally {
      await k.stop();
    }
  },
});
