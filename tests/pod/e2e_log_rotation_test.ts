/**
 * The bundled kubelet under exactly its planned permission lists on a real containerd
 * (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh; skipped without it): the container log
 * link is a hard link (Deno's scoped grants allow no symbolic link), log rotation renames,
 * compresses and reopens the log, and the link follows the new file.
 */
import assert from "node:assert/strict";
import { createCriRuntime } from "../../src/runtime/mod.ts";
import { spawnBundled, writeKubeletConfig } from "../ship/_helpers.ts";
import {
  IMAGE,
  privateCri,
  privateCriMissing,
  waitFor,
} from "./_containerd_e2e.ts";

async function findFile(
  dir: string,
  match: (name: string) => boolean,
): Promise<string | undefined> {
  try {
    for await (const e of Deno.readDir(dir)) if (match(e.name)) return e.name;
  } catch {
    return undefined;
  }
  return undefined;
}

Deno.test({
  name:
    "containerd, bundled with planned permissions: hard log links that follow log rotation",
  // a whole kubelet process stops pods it does not know: it gets a containerd of its own
  ignore: privateCriMissing,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cri = await privateCri("logs");
    const node = `e2e-logs-${crypto.randomUUID().slice(0, 8)}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-logs-" });
    await Deno.mkdir(`${dir}/manifests`);
    await Deno.mkdir(`${dir}/logs`);
    await Deno.writeTextFile(
      `${dir}/manifests/logger.json`,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "logger" },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{
            name: "app",
            image: IMAGE,
            imagePullPolicy: "IfNotPresent",
            command: [
              "sh",
              "-c",
              "i=0; while true; do echo line-$i-0123456789abcdef0123456789abcdef; i=$((i+1)); sleep 0.01; done",
            ],
          }],
        },
      }),
    );
    const args = await writeKubeletConfig(dir, [
      `containerRuntimeEndpoint: ${cri.endpoint}`,
      `staticPodPath: ${dir}/manifests`,
      `podLogsDir: ${dir}/logs`,
      "fileCheckFrequency: 1s",
      "healthzPort: 0",
      "address: 127.0.0.1",
      "containerLogMaxSize: 4Ki",
      "containerLogMaxFiles: 3",
      "containerLogMonitorInterval: 3s",
    ], ["--hostname-override", node]);
    const { grants, child } = await spawnBundled(dir, args);
    assert.ok(grants.every((g) => !/^--allow-(all|run|ffi)\b|^-A$/.test(g)));
    const stderr = new Response(child.stderr).text();
    const runtime = createCriRuntime({
      endpoint: cri.endpoint,
      timeoutMs: 30_000,
    });
    try {
      // upstream's place for the links, whatever podLogsDir is
      const links = "/var/log/containers";
      const link = await waitFor(
        "the container log link",
        () =>
          findFile(links, (n) => n.startsWith(`logger-${node}_default_app-`)),
      );
      assert.equal((await Deno.lstat(`${links}/${link}`)).isSymlink, false);
      const podDir = await waitFor(
        "the pod log directory",
        () =>
          findFile(
            `${dir}/logs`,
            (n) => n.startsWith(`default_logger-${node}_`),
          ),
      );
      const logDir = `${dir}/logs/${podDir}/app`;
      await waitFor(
        "a compressed rotation",
        () => findFile(logDir, (n) => /^0\.log\.\d{8}-\d{6}\.gz$/.test(n)),
        30_000,
      );
      const names = (await Array.fromAsync(Deno.readDir(logDir))).map((e) =>
        e.name
      );
      // the live file, at most maxFiles - 2 = 1 older rotation, the newest one
      assert.ok(names.includes("0.log"), names.join(" "));
      assert.ok(names.length <= 3, names.join(" "));
      await waitFor("the link to show the live log file", async () => {
        const [a, b] = await Promise.all([
          Deno.stat(`${links}/${link}`),
          Deno.stat(`${logDir}/0.log`),
        ]);
        return a.ino === b.ino || undefined;
      }, 10_000);
      // a file just reopened after a rotation is empty until the container's next line
      await waitFor(
        "a line through the link",
        async () =>
          /stdout F line-/.test(await Deno.readTextFile(`${links}/${link}`)) ||
          undefined,
        10_000,
      );
    } finally {
      try {
        child.kill("SIGTERM");
      } catch {
        // it already exited: its stderr says why
      }
      await child.status;
      const err = await stderr;
      const { items } = await runtime.listPodSandbox({});
      for (const s of items.filter((s) => s.metadata?.name.endsWith(node))) {
        await runtime.stopPodSandbox({ podSandboxId: s.id }).catch(() => {});
        await runtime.removePodSandbox({ podSandboxId: s.id }).catch(() => {});
      }
      await runtime.close();
      for await (const e of Deno.readDir("/var/log/containers")) {
        if (e.name.includes(node)) {
          await Deno.remove(`/var/log/containers/${e.name}`).catch(() => {});
        }
      }
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      assert.doesNotMatch(err, /NotCapable|Requires \w+ access/);
    }
  },
});
