/**
 * Security context, hooks, sysctl admission and container log links on a real containerd
 * (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh); skipped without it.
 */
import assert from "node:assert/strict";
import {
  endpoint,
  running,
  shContainer,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

/** The CRI log lines' content (`<time> <stream> <tag> <content>`). */
function logText(raw: string): string {
  return raw.split("\n").filter((l) => l).map((l) =>
    l.split(" ").slice(3).join(" ")
  ).join("\n");
}

async function podLogDir(logsDir: string, pod: string): Promise<string> {
  for await (const d of Deno.readDir(logsDir)) {
    if (d.name.startsWith(`default_${pod}_`)) return `${logsDir}/${d.name}`;
  }
  throw new Error(`no log directory for ${pod}`);
}

Deno.test({
  name:
    "containerd: user, groups, read-only root, dropped CHOWN, log links and sysctls reach the container",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({
      containerLogs: {},
      allowedUnsafeSysctls: [],
    });
    await e.write("sec.yaml", {
      metadata: { name: "sec" },
      spec: {
        restartPolicy: "Never",
        terminationGracePeriodSeconds: 1,
        securityContext: {
          runAsUser: 1234,
          runAsGroup: 2345,
          supplementalGroups: [3456],
          fsGroup: 4567,
          sysctls: [{
            name: "net.ipv4.ip_unprivileged_port_start",
            value: "0",
          }],
        },
        containers: [
          shContainer("ids", "id -u; id -g; id -G"),
          shContainer(
            "rofs",
            "touch /made 2>/dev/null && echo wrote || echo refused",
            { securityContext: { readOnlyRootFilesystem: true } },
          ),
          shContainer(
            "nochown",
            "chown 1:1 /tmp 2>/dev/null && echo chowned || echo denied",
            {
              securityContext: {
                runAsUser: 0,
                capabilities: { drop: ["CHOWN"] },
              },
            },
          ),
          shContainer(
            "chown",
            "chown 1:1 /tmp 2>/dev/null && echo chowned || echo denied",
            { securityContext: { runAsUser: 0 } },
          ),
          shContainer(
            "sysctl",
            "cat /proc/sys/net/ipv4/ip_unprivileged_port_start",
          ),
        ],
      },
    });
    await e.write("bad-sysctl.yaml", {
      metadata: { name: "badsysctl" },
      spec: {
        securityContext: { sysctls: [{ name: "kernel.msgmax", value: "1" }] },
        containers: [shContainer("c", "sleep 60")],
      },
    });
    const done = await waitFor("every container of sec exited", () => {
      const cs = e.statuses("sec").at(-1)?.containerStatuses ?? [];
      return cs.length === 5 && cs.every((c) => c.state.terminated)
        ? cs
        : undefined;
    });
    assert.ok(done.every((c) => c.state.terminated?.exitCode === 0));
    const dir = await podLogDir(e.logsDir, `sec-${e.node}`);
    const out = async (name: string) =>
      logText(await Deno.readTextFile(`${dir}/${name}/0.log`));
    const [uid, gid, groups] = (await out("ids")).split("\n");
    assert.equal(uid, "1234");
    assert.equal(gid, "2345");
    assert.deepEqual(
      groups?.split(" ").sort(),
      ["2345", "3456", "4567"],
    );
    assert.equal(await out("rofs"), "refused");
    assert.equal(await out("nochown"), "denied");
    assert.equal(await out("chown"), "chowned");
    assert.equal(await out("sysctl"), "0");

    // /var/log/containers links (here under <podLogsDir>/.containers) show the log files
    const links = `${e.logsDir}/.containers`;
    for (const c of await e.containers("sec")) {
      const link = `${links}/sec-${e.node}_default_${c.name}-${c.id}.log`;
      const target = await Deno.realPath(link);
      assert.equal(target, await Deno.realPath(`${dir}/${c.name}/0.log`));
      assert.equal(
        await Deno.readTextFile(link),
        await Deno.readTextFile(target),
      );
    }

    const rejected = e.statuses("badsysctl").at(-1);
    assert.equal(rejected?.phase, "Failed");
    assert.equal(rejected?.reason, "SysctlForbidden");
    assert.equal(
      rejected?.message,
      'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted',
    );
    assert.deepEqual(await e.sandboxes("badsysctl"), []);
    assert.ok(!e.created.includes(`badsysctl-${e.node}`));
  },
});

Deno.test({
  name:
    "containerd: a preStop httpGet hook reaches the pod; a failed postStart kills and restarts the container",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e();
    await e.write("web.yaml", {
      metadata: { name: "web" },
      spec: {
        terminationGracePeriodSeconds: 5,
        containers: [shContainer(
          "app",
          "mkdir -p /www && exec httpd -f -vv -p 8080 -h /www",
          {
            ports: [{ name: "http", containerPort: 8080 }],
            lifecycle: {
              preStop: { httpGet: { path: "/drain", port: "http" } },
            },
          },
        )],
      },
    });
    await e.write("hook.yaml", {
      metadata: { name: "hook" },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [shContainer("app", "sleep 3600", {
          lifecycle: {
            postStart: { exec: { command: ["sh", "-c", "exit 7"] } },
          },
        })],
      },
    });
    await waitFor(
      "web running",
      async () => running(await e.containers("web")).length === 1 || undefined,
    );
    // the hook's server listens once httpd is up
    await new Promise((r) => setTimeout(r, 500));
    const dir = await podLogDir(e.logsDir, `web-${e.node}`);
    await e.remove("web.yaml");
    await waitFor(
      "web stopped",
      async () => running(await e.containers("web")).length === 0 || undefined,
    );
    const log = await Deno.readTextFile(`${dir}/app/0.log`);
    assert.match(log, /\/drain/);

    await waitFor(
      "the failing postStart container restarted",
      () =>
        e.created.filter((p) => p === `hook-${e.node}`).length >= 2 ||
        undefined,
    );
    const failed = e.statuses("hook").flatMap((s) => s.containerStatuses ?? [])
      .find((c) => c.state.waiting?.reason === "PostStartHookError");
    assert.match(
      failed?.state.waiting?.message ?? "",
      /Exec lifecycle hook \(\[sh -c exit 7\]\) for Container "app" .* exited with 7/,
    );
    assert.ok(
      e.logger.records.some((r) => r.msg.includes("PostStart hook failed")),
    );
  },
});
