/**
 * The kubelet API over a real containerd (`KUBELET_TS_CRI_ENDPOINT`, scripts/cri_env.sh):
 * containerd's own CRI log files served by `/containerLogs` (plain, tail, timestamps, follow)
 * and its container stats in `/metrics/resource`. Skips without the endpoint.
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

Deno.test({
  name: "the kubelet API serves containerd's log files and container stats",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await using api = await serveContainerdApi(e);
    const { port, caPem, client } = api;
    await e.write("talker.json", {
      metadata: { name: "talker" },
      spec: {
        containers: [{
          name: "app",
          image: IMAGE,
          imagePullPolicy: "IfNotPresent",
          command: [
            "sh",
            "-c",
            "echo hello; echo world; i=0; while true; do sleep 0.3; i=$((i+1)); echo tick $i; done",
          ],
        }],
      },
    });
    await waitFor(
      "the container running",
      async () =>
        running(await e.containers("talker")).length === 1 ? true : undefined,
    );
    const base =
      `https://127.0.0.1:${port}/containerLogs/default/talker-${e.node}/app`;
    const ask = (query = "") => get(`${base}${query}`, { caPem, cert: client });
    const all = await waitFor("two ticks logged", async () => {
      const r = await ask();
      return r.body.includes("tick 2\n") ? r : undefined;
    });
    assert.equal(all.status, 200);
    assert.ok(
      all.body.startsWith("hello\nworld\ntick 1\ntick 2\n"),
      all.body,
    );
    assert.match((await ask("?tailLines=1")).body, /^tick \d+\n$/);
    assert.match(
      (await ask("?tailLines=2&timestamps=true")).body,
      /^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d) tick \d+\n\S+ tick \d+\n$/,
    );
    assert.equal((await ask("?limitBytes=8")).body, "hello\nwo");
    assert.equal((await ask("?previous=true")).status, 400);
    // follow: new lines arrive on the open response.
    using http = Deno.createHttpClient({
      caCerts: [caPem],
      cert: client.certPem,
      key: client.keyPem,
    });
    const followed = await fetch(`${base}?follow=true&tailLines=1`, {
      client: http,
    });
    const reader = followed.body!.pipeThrough(new TextDecoderStream())
      .getReader();
    let text = "";
    while ((text.match(/tick/g) ?? []).length < 3) {
      text += (await reader.read()).value ?? "";
    }
    await reader.cancel();
    const ticks = [...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
    assert.deepEqual(ticks.slice(1), [ticks[0]! + 1, ticks[0]! + 2], text);
    // containerd's stats reach /metrics/resource.
    const resource = await get(`https://127.0.0.1:${port}/metrics/resource`, {
      caPem,
      cert: client,
    });
    assert.match(
      resource.body,
      new RegExp(
        `^container_memory_working_set_bytes\\{container="app",namespace="default",pod="talker-${e.node}"\\} [1-9]\\d* \\d+$`,
        "m",
      ),
    );
    await e.remove("talker.json");
  },
});
