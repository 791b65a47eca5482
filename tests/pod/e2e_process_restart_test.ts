/**
 * The real `main.ts` process against a private runtime-only containerd (a second
 * `scripts/cri_env.sh` instance, so its orphan clean-up and container GC see only this test's
 * pods): finished Never and OnFailure pods are not run again after the kubelet is stopped with
 * SIGTERM, nor after SIGKILL. Needs root, `KUBELET_TS_CRI_ENDPOINT` and
 * `KUBELET_TS_CRI_ROOT`; skipped otherwise.
 */
import assert from "node:assert/strict";
import {
  ContainerState,
  createCriRuntime,
  type CriRuntime,
} from "../../src/runtime/mod.ts";
import {
  criEnv,
  endpoint,
  IMAGE,
  standaloneConfig,
  waitFor,
} from "./_containerd_e2e.ts";
import { removeCgroupTree } from "./_cgroups.ts";
import { claimSubnet } from "../_subnets.ts";
import { mountOf, removeTree } from "../_mounts.ts";
import { parseMountInfo } from "../../src/cgroup_agent/volume_tmpfs.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const criRoot = Deno.env.get("KUBELET_TS_CRI_ROOT") ?? "";
const isRoot = Deno.build.os === "linux" && Deno.uid() === 0;

/** How many mounts the table has exactly at `path`. */
async function mountsAt(path: string): Promise<number> {
  const text = await Deno.readTextFile("/proc/self/mountinfo");
  return parseMountInfo(text).filter((e) => e.mountPoint === path).length;
}

/** A kubelet subprocess whose stderr is collected. */
class KubeletProcess {
  #child: Deno.ChildProcess;
  #done: Promise<void>;
  stderr = "";

  constructor(args: string[]) {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts", ...args],
      cwd: ROOT,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#done = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of child.stderr) {
        this.stderr += decoder.decode(chunk, { stream: true });
      }
    })();
  }

  /** Sends `signal` and waits for the exit. */
  async stop(signal: Deno.Signal): Promise<Deno.CommandStatus> {
    try {
      this.#child.kill(signal);
    } catch {
      // already exited
    }
    const status = await this.#child.status;
    await this.#done;
    return status;
  }
}

function job(name: string, restartPolicy: string, script: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      hostNetwork: true,
      restartPolicy,
      terminationGracePeriodSeconds: 2,
      containers: [{
        name: "job",
        image: IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: ["sh", "-c", script],
      }],
    },
  });
}

const JOBS = ["ok", "bad", "retry"];

Deno.test({
  name:
    "main.ts on containerd: finished Never and OnFailure pods are not run again after SIGTERM or SIGKILL and a restart",
  ignore: !endpoint || !criRoot || !isRoot,
  async fn() {
    const id = crypto.randomUUID().slice(0, 6);
    // released after the finally below has taken the instance down
    await using claim = await claimSubnet();
    const env = {
      KTS_CRI_ROOT: `${criRoot}-proc-${id}`,
      KTS_CRI_RUNTIME_ONLY: "1",
      KTS_CRI_BRIDGE: `ktsp${id}`,
      KTS_CRI_SUBNET: claim.subnet,
    };
    const dir = await Deno.makeTempDir({ prefix: "kts-proc-restart-" });
    let kubelet: KubeletProcess | undefined;
    let runtime: CriRuntime | undefined;
    try {
      const lines = await criEnv("up", env);
      const privateEndpoint = /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(lines)
        ?.[1];
      assert.ok(privateEndpoint, `no endpoint in: ${lines}`);
      runtime = createCriRuntime({
        endpoint: privateEndpoint,
        timeoutMs: 30_000,
      });
      const node = `proc-${id}`;
      await Deno.mkdir(`${dir}/manifests`);
      await Deno.writeTextFile(
        `${dir}/config.yaml`,
        standaloneConfig(dir, privateEndpoint, `/kts-proc-${id}`),
      );
      await Deno.writeTextFile(
        `${dir}/manifests/ok.json`,
        job("ok", "Never", "echo done"),
      );
      await Deno.writeTextFile(
        `${dir}/manifests/bad.json`,
        job("bad", "Never", "exit 1"),
      );
      await Deno.writeTextFile(
        `${dir}/manifests/retry.json`,
        job(
          "retry",
          "OnFailure",
          "if [ -e /dev/shm/ran ]; then exit 0; fi; touch /dev/shm/ran; exit 1",
        ),
      );
      const args = [
        "--config",
        `${dir}/config.yaml`,
        `--root-dir=${dir}/root`,
        `--hostname-override=${node}`,
      ];
      const rt = runtime;
      const containers = async () => {
        const { containers } = await rt.listContainers({});
        return containers.map((c) => ({
          id: c.id,
          pod: c.labels["io.kubernetes.pod.name"] ?? "",
          state: c.state,
        }));
      };
      const exited = (cs: Awaited<ReturnType<typeof containers>>) =>
        cs.filter((c) => c.state === ContainerState.CONTAINER_EXITED);
      /** The kubelet reported every job finished (`Pod status` lines). */
      const reported = (k: KubeletProcess) =>
        JOBS.every((p) =>
          k.stderr.split("\n").some((l) =>
            l.includes(`pod="default/${p}-${node}"`) &&
            /phase="(Succeeded|Failed)"/.test(l)
          )
        );

      kubelet = new KubeletProcess(args);
      const k1 = kubelet;
      await waitFor("the jobs finished", async () => {
        const done = exited(await containers());
        const count = (p: string) =>
          done.filter((c) => c.pod === `${p}-${node}`).length;
        return count("ok") === 1 && count("bad") === 1 &&
            count("retry") === 2 && reported(k1)
          ? true
          : undefined;
      }, 120_000);
      await new Promise((r) => setTimeout(r, 3_000)); // the workers finish
      // with every permission the kubelet made its root dir a shared mount (upstream
      // MakeRShared): a bind of it on itself, unless it already was on a shared mount
      const rootMount = await mountOf(`${dir}/root`);
      assert.equal(rootMount?.shared, true, JSON.stringify(rootMount));
      const before = new Set((await containers()).map((c) => c.id));

      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        await kubelet.stop(signal);
        kubelet = new KubeletProcess(args);
        const k = kubelet;
        await waitFor(
          `statuses after ${signal}`,
          () => reported(k) ? true : undefined,
          60_000,
        );
        await new Promise((r) => setTimeout(r, 5_000)); // several housekeeping passes
        const now = await containers();
        const fresh = now.filter((c) => !before.has(c.id));
        // a restart finds it shared and binds nothing more on it
        assert.ok(
          (await mountsAt(`${dir}/root`)) <= 1,
          `one mount at most on the root dir after ${signal}`,
        );
        assert.deepEqual(fresh, [], `no container created after ${signal}`);
        for (const p of JOBS) {
          assert.ok(
            exited(now).some((c) => c.pod === `${p}-${node}`),
            `${p} keeps an exited container after ${signal}`,
          );
        }
      }
    } finally {
      await kubelet?.stop("SIGTERM");
      await runtime?.close();
      await criEnv("down", env).catch(() => {});
      await removeCgroupTree(`/kts-proc-${id}`);
      // the root dir is a mount of its own when the kubelet made it shared
      await removeTree(dir).catch(() => {});
    }
  },
});
