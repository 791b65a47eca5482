/**
 * The streaming endpoints over a real containerd (`KUBELET_TS_CRI_ENDPOINT`,
 * scripts/cri_env.sh), spoken to directly over TLS with a client certificate: exec with stdin,
 * stdout, stderr and the exit code (WebSocket `channel.k8s.io`), attach, port-forward to
 * busybox httpd, run, the SPDY handshake, the errors before an upgrade, and containerd's stats
 * in /stats/summary. Skips without the endpoint.
 */
import assert from "node:assert/strict";
import {
  endpoint,
  IMAGE,
  running,
  startE2e,
  waitFor,
} from "../pod/_containerd_e2e.ts";
import { serveContainerdApi } from "./_containerd_api.ts";
import { get } from "./_helpers.ts";
import {
  openStream,
  streamingContainers,
  type StreamTarget,
  websocketHeaders,
} from "./_stream_client.ts";

const CHANNEL_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

Deno.test({
  name:
    "exec, attach, port-forward and run reach containerd's streaming server; its stats reach /stats/summary",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await using api = await serveContainerdApi(e);
    const { port, caPem, client } = api;
    await e.write("web.json", {
      metadata: { name: "web" },
      spec: {
        containers: streamingContainers(IMAGE),
      },
    });
    await waitFor(
      "both containers running",
      async () =>
        running(await e.containers("web")).length === 2 ? true : undefined,
    );
    const target: StreamTarget = { port, caPem, cert: client };
    const pod = `web-${e.node}`;

    // exec: stdin in, stdout and stderr out, exit code in the status.
    const command = ["sh", "-c", "read x; echo got $x; echo oops >&2; exit 3"]
      .map((c) => `command=${encodeURIComponent(c)}`).join("&");
    const exec = await openStream(
      target,
      "GET",
      `/exec/default/${pod}/talker?${command}&input=1&output=1&error=1`,
      websocketHeaders(CHANNEL_PROTOCOLS),
    );
    assert.equal(exec.status, 101, exec.body);
    assert.ok(
      CHANNEL_PROTOCOLS.includes(
        exec.headers.get("sec-websocket-protocol") ?? "",
      ),
    );
    await exec.send(0, "hello\n");
    await exec.closed;
    assert.equal(exec.text(1), "got hello\n");
    assert.equal(exec.text(2), "oops\n");
    const status = JSON.parse(exec.text(3));
    assert.equal(status.status, "Failure");
    assert.deepEqual(status.details.causes, [{
      reason: "ExitCode",
      message: "3",
    }]);

    // attach: the running process's output.
    const attach = await openStream(
      target,
      "GET",
      `/attach/default/${pod}/talker?output=1`,
      websocketHeaders(CHANNEL_PROTOCOLS),
    );
    assert.equal(attach.status, 101, attach.body);
    await waitFor(
      "two ticks through attach",
      () => /tick \d+\ntick \d+\n/.test(attach.text(1)) ? true : undefined,
      10_000,
    );
    attach.close();

    // port-forward: an HTTP GET to httpd on 8080 through the WebSocket channels.
    const forward = await openStream(
      target,
      "GET",
      `/portForward/default/${pod}?port=8080`,
      websocketHeaders(["v4.channel.k8s.io"]),
    );
    assert.equal(forward.status, 101, forward.body);
    await waitFor(
      "the port announced",
      () => forward.received(0).length >= 2 ? true : undefined,
      10_000,
    );
    await forward.send(
      0,
      "GET /index.html HTTP/1.0\r\nHost: localhost\r\n\r\n",
    );
    await waitFor(
      "httpd's answer",
      () => forward.text(0).includes("served-by-httpd") ? true : undefined,
      10_000,
    );
    assert.match(forward.text(0), /HTTP\/1\.[01] 200 OK/);
    forward.close();

    // SPDY: the handshake is relayed (the frames are not the kubelet's business).
    const spdy = await openStream(
      target,
      "POST",
      `/exec/default/${pod}/talker?command=true&output=1`,
      {
        Connection: "Upgrade",
        Upgrade: "SPDY/3.1",
        "X-Stream-Protocol-Version": "v4.channel.k8s.io",
      },
    );
    assert.equal(spdy.status, 101);
    assert.equal(spdy.headers.get("upgrade"), "SPDY/3.1");
    assert.equal(
      spdy.headers.get("x-stream-protocol-version"),
      "v4.channel.k8s.io",
    );
    spdy.close();

    // run: ExecSync's output in the body; a failing command is a 500 naming the exit code.
    const base = `https://127.0.0.1:${port}`;
    const run = await get(
      `${base}/run/default/${pod}/talker?cmd=echo%20ran%20here`,
      { caPem, cert: client, method: "POST" },
    );
    assert.deepEqual(run, { status: 200, body: "ran here\n" });
    const failing = await get(
      `${base}/run/default/${pod}/talker?cmd=false`,
      { caPem, cert: client, method: "POST" },
    );
    assert.equal(failing.status, 500);
    assert.match(failing.body, /command 'false' exited with 1/);

    // /stats/summary: containerd's sandbox and container stats, the node's own figures.
    // deno-lint-ignore no-explicit-any
    type Json = Record<string, any>;
    const summaryResponse = await get(`${base}/stats/summary`, {
      caPem,
      cert: client,
    });
    assert.equal(
      summaryResponse.status,
      200,
      JSON.stringify(
        e.logger.records.filter((r) => r.msg === "HTTP handler failed"),
      ),
    );
    const summary: Json = JSON.parse(summaryResponse.body);
    assert.equal(summary.node.nodeName, e.node);
    assert.ok(summary.node.memory.workingSetBytes > 0);
    assert.ok(summary.node.fs.capacityBytes > 0);
    const web = summary.pods.find((p: Json) => p.podRef.name === pod);
    assert.ok(web, JSON.stringify(summary.pods.map((p: Json) => p.podRef)));
    assert.equal(web.podRef.namespace, "default");
    assert.deepEqual(
      web.containers.map((c: Json) => c.name).sort(),
      ["httpd", "talker"],
    );
    for (const c of web.containers) {
      assert.ok(c.cpu.usageCoreNanoSeconds > 0, JSON.stringify(c));
      assert.ok(c.memory.workingSetBytes > 0, JSON.stringify(c));
      assert.match(c.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    assert.ok(web.memory.workingSetBytes > 0);
    const only: Json = JSON.parse(
      (await get(`${base}/stats/summary?only_cpu_and_memory=true`, {
        caPem,
        cert: client,
      })).body,
    );
    const onlyWeb = only.pods.find((p: Json) => p.podRef.name === pod);
    assert.equal(onlyWeb.network, undefined);
    assert.ok(onlyWeb.containers[0].memory.workingSetBytes > 0);
    assert.equal(only.node.fs, undefined);

    // promtool (Debian prometheus, installed by scripts/cri_env.sh) accepts both metric texts.
    for (const path of ["/metrics", "/metrics/resource", "/metrics/probes"]) {
      const text = (await get(`${base}${path}`, { caPem, cert: client }))
        .body;
      assert.match(text, /^# HELP /);
      let check: Deno.ChildProcess;
      try {
        check = new Deno.Command("promtool", {
          args: ["check", "metrics"],
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
      } catch (cause) {
        throw new Error(
          "promtool is missing: run `bash scripts/cri_env.sh up` (installs the prometheus package)",
          { cause },
        );
      }
      const w = check.stdin.getWriter();
      await w.write(new TextEncoder().encode(text));
      await w.close();
      const out = await check.output();
      const dec = new TextDecoder();
      assert.equal(
        out.code,
        0,
        `promtool check metrics ${path}: ${dec.decode(out.stdout)}${
          dec.decode(out.stderr)
        }`,
      );
    }

    // The recorded series under upstream's names, from this kubelet's own work.
    const metrics = (await get(`${base}/metrics`, { caPem, cert: client }))
      .body;
    const sample = (series: string) => {
      const line = metrics.split("\n").find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.split(" ")[1]);
    };
    for (
      const series of [
        'kubelet_runtime_operations_total{operation_type="run_podsandbox"}',
        'kubelet_runtime_operations_total{operation_type="create_container"}',
        'kubelet_runtime_operations_duration_seconds_count{operation_type="list_containers"}',
        "kubelet_started_pods_total",
        'kubelet_started_containers_total{container_type="container"}',
        "kubelet_pleg_relist_duration_seconds_count",
        "kubelet_pleg_relist_interval_seconds_count",
        'kubelet_pod_worker_duration_seconds_count{operation_type="create"}',
        "kubelet_pod_start_duration_seconds_count",
      ]
    ) {
      assert.ok((sample(series) ?? 0) >= 1, `${series} in /metrics`);
    }

    // Errors before any upgrade: proper statuses with their reason.
    const plain = await get(
      `${base}/exec/default/${pod}/talker?command=true&output=1`,
      { caPem, cert: client },
    );
    assert.equal(plain.status, 400);
    assert.match(plain.body, /Upgrade request required/);
    const noStreams = await openStream(
      target,
      "GET",
      `/exec/default/${pod}/talker?command=true`,
      websocketHeaders(CHANNEL_PROTOCOLS),
    );
    assert.equal(noStreams.status, 400);
    assert.match(noStreams.body, /at least 1 of stdin, stdout, stderr/);
    const noPod = await openStream(
      target,
      "GET",
      `/exec/default/nope-${e.node}/talker?command=true&output=1`,
      websocketHeaders(CHANNEL_PROTOCOLS),
    );
    assert.equal(noPod.status, 404);
    assert.match(noPod.body, /pod does not exist/);
    const noContainer = await openStream(
      target,
      "GET",
      `/exec/default/${pod}/ghost?command=true&output=1`,
      websocketHeaders(CHANNEL_PROTOCOLS),
    );
    assert.equal(noContainer.status, 404);
    assert.match(noContainer.body, /container not found \("ghost"\)/);
    await e.remove("web.json");
  },
});
