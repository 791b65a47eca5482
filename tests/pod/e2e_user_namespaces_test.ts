/**
 * `hostUsers: false` with the real `main.ts` process on a private containerd 2 (the peers'
 * containerd and runc, `bash scripts/peers.sh containerd2`, which report user namespace
 * support; skipped when they are not built, without `KUBELET_TS_CRI_ENDPOINT`/
 * `KUBELET_TS_CRI_ROOT` or without root). What upstream's e2e tests check (security_context.go
 * "When creating a pod with HostUsers"): a pod of its own gets a 65536-wide range that is not
 * another pod's, a pod without it sees the whole host range, files root owns on the host are
 * root's inside; and the range is recorded in the pod directory in upstream's file, kept
 * across a kubelet restart.
 */
import assert from "node:assert/strict";
import {
  ContainerState,
  createCriRuntime,
  type CriRuntime,
} from "../../src/runtime/mod.ts";
import { parseMappingsFile } from "../../src/userns/mod.ts";
import {
  IMAGE,
  privateCri,
  privateCriMissing,
  standaloneConfig,
  waitFor,
} from "./_containerd_e2e.ts";
import { removeCgroupTree } from "./_cgroups.ts";
import { peersOutput } from "../_peers.ts";
import { removeTree } from "../_mounts.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const runtimeDir = privateCriMissing
  ? undefined
  : await peersOutput("containerd2-dir");

/**
 * A kubelet subprocess whose stderr is collected; `prefix` is a command that ends by
 * executing the kubelet command line it is given.
 */
function spawnKubelet(args: string[], prefix: string[] = []) {
  const kubelet = [Deno.execPath(), "run", "-A", "main.ts", ...args];
  const [command, ...rest] = [...prefix, ...kubelet];
  const child = new Deno.Command(command!, {
    args: rest,
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = { text: "" };
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      log.text += decoder.decode(chunk, { stream: true });
    }
  })();
  return {
    log,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      await child.status;
      await done;
    },
  };
}

/** A pod with an emptyDir and a downwardAPI volume; `fsGroup` as the pod's. */
function pod(name: string, hostUsers: boolean | undefined, fsGroup?: number) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      ...(hostUsers === undefined ? {} : { hostUsers }),
      ...(fsGroup === undefined ? {} : { securityContext: { fsGroup } }),
      terminationGracePeriodSeconds: 1,
      volumes: [
        { name: "data", emptyDir: {} },
        {
          name: "meta",
          downwardAPI: {
            items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }],
          },
        },
      ],
      containers: [{
        name: "c",
        image: IMAGE,
        imagePullPolicy: "IfNotPresent",
        command: ["sh", "-c", "echo hi > /data/by-root; exec sleep 3600"],
        volumeMounts: [
          { name: "data", mountPath: "/data" },
          { name: "meta", mountPath: "/meta" },
        ],
      }],
    },
  };
}

Deno.test({
  name:
    "main.ts on containerd 2: hostUsers false runs in a user namespace of its own, recorded as upstream records it",
  ignore: !runtimeDir,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cri = await privateCri("usrns", {
      containerd: `${runtimeDir}/containerd`,
      runc: `${runtimeDir}/runc`,
    });
    const id = crypto.randomUUID().slice(0, 6);
    const node = `userns-${id}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-userns-" });
    const runtime: CriRuntime = createCriRuntime({
      endpoint: cri.endpoint,
      timeoutMs: 30_000,
    });
    let kubelet: ReturnType<typeof spawnKubelet> | undefined;
    try {
      await Deno.mkdir(`${dir}/manifests`);
      await Deno.writeTextFile(
        `${dir}/config.yaml`,
        standaloneConfig(dir, cri.endpoint, `/kts-userns-${id}`),
      );
      for (
        const [name, hostUsers] of [["own1", false], ["own2", false], [
          "host",
          undefined,
        ]] as const
      ) {
        await Deno.writeTextFile(
          `${dir}/manifests/${name}.json`,
          JSON.stringify(
            pod(name, hostUsers, name === "own2" ? 200 : undefined),
          ),
        );
      }
      const args = [
        "--config",
        `${dir}/config.yaml`,
        `--root-dir=${dir}/root`,
        `--hostname-override=${node}`,
      ];
      kubelet = spawnKubelet(args);
      const running = async () => {
        const { containers } = await runtime.listContainers({});
        return new Map(
          containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING)
            .map((c) => [
              (c.labels["io.kubernetes.pod.name"] ?? "").replace(
                `-${node}`,
                "",
              ),
              { id: c.id, uid: c.labels["io.kubernetes.pod.uid"] ?? "" },
            ]),
        );
      };
      const k = kubelet;
      const pods = await waitFor("the three pods running", async () => {
        const r = await running();
        return r.size === 3 ? r : undefined;
      }, 120_000).catch((e) => {
        throw new Error(`${e.message}\n${k.log.text.slice(-3000)}`);
      });
      const exec = async (container: string, cmd: string[]) => {
        const out = await runtime.execSync({
          containerId: container,
          cmd,
          timeout: 10n,
        });
        assert.equal(out.exitCode, 0, new TextDecoder().decode(out.stderr));
        return new TextDecoder().decode(out.stdout).trim();
      };
      const uidMap = (name: string) =>
        exec(pods.get(name)!.id, ["cat", "/proc/self/uid_map"]);
      const fields = (s: string) => s.split(/\s+/).map(Number);

      // the pod without hostUsers sees the host's IDs, as upstream's "set to true" test
      assert.deepEqual(fields(await uidMap("host")), [0, 0, 4294967295]);
      assert.equal(
        await Deno.stat(`${dir}/root/pods/${pods.get("host")!.uid}/userns`)
          .then(() => true, () => false),
        false,
        "a pod in the node's user namespace has no mappings file",
      );

      const seen: number[] = [];
      for (const name of ["own1", "own2"]) {
        const { id: container, uid } = pods.get(name)!;
        const map = fields(await uidMap(name));
        const gidMap = fields(
          await exec(container, ["cat", "/proc/self/gid_map"]),
        );
        const file = await Deno.readTextFile(`${dir}/root/pods/${uid}/userns`);
        const range = parseMappingsFile(file);
        // root inside is the first ID of the recorded range, 65536 IDs wide
        assert.deepEqual(map, [0, range.hostId, 65536]);
        assert.deepEqual(gidMap, map);
        assert.ok(range.hostId >= 65536 && range.hostId % 65536 === 0);
        seen.push(range.hostId);
        // the ID-mapped emptyDir: root inside owns what it writes, and root on the host
        // owns it there (the mount maps the pod's range back); under fsGroup the group is
        // the fsGroup's (the directory is setgid), inside and on the host alike
        const group = name === "own2" ? 200 : 0;
        assert.equal(
          await exec(container, ["stat", "-c", "%u:%g", "/data/by-root"]),
          `0:${group}`,
        );
        const onHost = await Deno.stat(
          `${dir}/root/pods/${uid}/volumes/kubernetes.io~empty-dir/data/by-root`,
        );
        assert.deepEqual([onHost.uid, onHost.gid], [0, group]);
        // the managed /etc/hosts (root's on the host) is root's inside too
        assert.equal(
          await exec(container, ["stat", "-c", "%u", "/etc/hosts"]),
          "0",
        );
        // upstream's volume checks: a downwardAPI file's group is root's inside, or the
        // fsGroup's (own2 has fsGroup 200)
        assert.equal(
          await exec(container, [
            "sh",
            "-c",
            "stat -c %g $(find /meta/ -type f)",
          ]),
          name === "own2" ? "200" : "0",
        );
      }
      assert.notEqual(seen[0], seen[1], "two pods share a range");

      // a restart reads the files back: the same ranges, the same containers
      const before = await Promise.all(
        ["own1", "own2"].map((n) =>
          Deno.readTextFile(`${dir}/root/pods/${pods.get(n)!.uid}/userns`)
        ),
      );
      await kubelet.stop();
      kubelet = spawnKubelet(args);
      const k2 = kubelet;
      await waitFor(
        "the restarted kubelet syncing the pods",
        () =>
          k2.log.text.includes(`pod="default/own2-${node}"`) ? true : undefined,
        60_000,
      );
      await new Promise((r) => setTimeout(r, 3_000));
      const after = await running();
      for (const [i, n] of ["own1", "own2"].entries()) {
        assert.equal(
          after.get(n)?.id,
          pods.get(n)!.id,
          `${n} kept its container`,
        );
        assert.equal(
          await Deno.readTextFile(
            `${dir}/root/pods/${pods.get(n)!.uid}/userns`,
          ),
          before[i],
        );
      }

      // a removed pod frees its range: its file goes with it
      const own1 = pods.get("own1")!.uid;
      await Deno.remove(`${dir}/manifests/own1.json`);
      await waitFor(
        "own1's mappings file removed",
        () =>
          Deno.stat(`${dir}/root/pods/${own1}/userns`).then(
            () => undefined,
            () => true,
          ),
        60_000,
      );
    } finally {
      await kubelet?.stop();
      await runtime.close();
      await cri[Symbol.asyncDispose]();
      await removeCgroupTree(`/kts-userns-${id}`);
      await removeTree(dir);
    }
  },
});

const getsubids = await new Deno.Command("sh", {
  args: ["-c", "command -v getsubids"],
  stdout: "piped",
  stderr: "null",
}).output().then((o) => new TextDecoder().decode(o.stdout).trim(), () => "");

Deno.test({
  name:
    "main.ts on containerd 2: a kubelet user with subordinate IDs (getsubids) gives the pods their range, as upstream",
  ignore: !runtimeDir || !getsubids,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cri = await privateCri("subid", {
      containerd: `${runtimeDir}/containerd`,
      runc: `${runtimeDir}/runc`,
    });
    const id = crypto.randomUUID().slice(0, 6);
    const node = `subid-${id}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-subid-" });
    const runtime: CriRuntime = createCriRuntime({
      endpoint: cri.endpoint,
      timeoutMs: 30_000,
    });
    let kubelet: ReturnType<typeof spawnKubelet> | undefined;
    // 110 ranges (maxPods) at 2^31, far above where the default range's picks start
    const first = 2 ** 31, length = 110 * 65536;
    try {
      await Deno.mkdir(`${dir}/manifests`);
      await Deno.mkdir(`${dir}/etc`);
      const passwd = (await Deno.readTextFile("/etc/passwd")).split("\n")
        .filter((l) => !l.startsWith("kubelet:")).join("\n").trimEnd();
      await Deno.writeTextFile(
        `${dir}/etc/passwd`,
        `${passwd}\nkubelet:x:64999:64999::/nonexistent:/usr/sbin/nologin\n`,
      );
      for (const f of ["subuid", "subgid"]) {
        await Deno.writeTextFile(
          `${dir}/etc/${f}`,
          `kubelet:${first}:${length}\n`,
        );
      }
      await Deno.writeTextFile(
        `${dir}/config.yaml`,
        standaloneConfig(dir, cri.endpoint, `/kts-subid-${id}`),
      );
      const p = pod("own", false);
      p.spec.volumes = [];
      p.spec.containers[0]!.volumeMounts = [];
      p.spec.containers[0]!.command = ["sleep", "3600"];
      await Deno.writeTextFile(`${dir}/manifests/own.json`, JSON.stringify(p));
      // the user and its IDs exist only in the kubelet's own mount namespace
      kubelet = spawnKubelet([
        "--config",
        `${dir}/config.yaml`,
        `--root-dir=${dir}/root`,
        `--hostname-override=${node}`,
      ], [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'for f in passwd subuid subgid; do mount --bind "$0/$f" "/etc/$f" || exit 1; done; exec "$@"',
        `${dir}/etc`,
      ]);
      const k = kubelet;
      const container = await waitFor("the pod running", async () => {
        const { containers } = await runtime.listContainers({});
        return containers.find((c) =>
          c.state === ContainerState.CONTAINER_RUNNING
        );
      }, 120_000).catch((e) => {
        throw new Error(`${e.message}\n${k.log.text.slice(-3000)}`);
      });
      const out = await runtime.execSync({
        containerId: container.id,
        cmd: ["cat", "/proc/self/uid_map"],
        timeout: 10n,
      });
      const [inside, host, size] = new TextDecoder().decode(out.stdout).trim()
        .split(/\s+/).map(Number);
      assert.equal(inside, 0);
      assert.equal(size, 65536);
      assert.ok(
        host! >= first && host! + size! <= first + length,
        `host ID ${host} inside the kubelet user's range ${first}+${length}`,
      );
      const uid = container.labels["io.kubernetes.pod.uid"] ?? "";
      assert.equal(
        parseMappingsFile(
          await Deno.readTextFile(`${dir}/root/pods/${uid}/userns`),
        ).hostId,
        host,
      );
    } finally {
      await kubelet?.stop();
      await runtime.close();
      await cri[Symbol.asyncDispose]();
      await removeCgroupTree(`/kts-subid-${id}`);
      await removeTree(dir);
    }
  },
});

const k8sBin = runtimeDir ? await peersOutput("dir") : undefined;

/** The upstream kubelet (the peers' v1.34.4), standalone on the same layout. */
function spawnUpstream(
  dir: string,
  node: string,
  endpoint: string,
  id: string,
) {
  const port = 20000 + Math.floor(Math.random() * 10000);
  Deno.writeTextFileSync(
    `${dir}/upstream.yaml`,
    [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      `containerRuntimeEndpoint: ${endpoint}`,
      `staticPodPath: ${dir}/manifests`,
      `podLogsDir: ${dir}/logs`,
      "cgroupDriver: cgroupfs",
      `cgroupRoot: /kts-userns-${id}`,
      "failSwapOn: false",
      "healthzPort: 0",
      "address: 127.0.0.1",
      `port: ${port}`,
      "readOnlyPort: 0",
      "resolvConf: /etc/resolv.conf",
      "fileCheckFrequency: 1s",
      "imageGCHighThresholdPercent: 100",
      "imageGCLowThresholdPercent: 99",
      "evictionHard:",
      '  memory.available: "100Mi"',
      '  nodefs.available: "1%"',
      '  imagefs.available: "1%"',
      "authentication:",
      "  anonymous:",
      "    enabled: false",
      "  webhook:",
      "    enabled: false",
      "authorization:",
      "  mode: AlwaysAllow",
      "",
    ].join("\n"),
  );
  // upstream's cgroupfs driver wants the cgroup root in every hierarchy
  for (const h of Deno.readDirSync("/sys/fs/cgroup")) {
    try {
      Deno.mkdirSync(`/sys/fs/cgroup/${h.name}/kts-userns-${id}`);
    } catch {
      // exists, or not a hierarchy
    }
  }
  const child = new Deno.Command(`${k8sBin}/kubelet`, {
    args: [
      "--config",
      `${dir}/upstream.yaml`,
      `--root-dir=${dir}/root`,
      `--cert-dir=${dir}/pki`,
      `--hostname-override=${node}`,
      "--v=2",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = { text: "" };
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      log.text += decoder.decode(chunk, { stream: true });
    }
  })();
  return {
    log,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      await child.status;
      await done;
    },
  };
}

Deno.test({
  name:
    "containerd 2: the upstream kubelet and main.ts take over each other's user namespace files and pods",
  ignore: !runtimeDir || !k8sBin,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using cri = await privateCri("usrsw", {
      containerd: `${runtimeDir}/containerd`,
      runc: `${runtimeDir}/runc`,
    });
    const id = crypto.randomUUID().slice(0, 6);
    const node = `userns-sw-${id}`;
    const dir = await Deno.makeTempDir({ prefix: "kts-userns-swap-" });
    const runtime: CriRuntime = createCriRuntime({
      endpoint: cri.endpoint,
      timeoutMs: 30_000,
    });
    let kubelet: { log: { text: string }; stop(): Promise<void> } | undefined;
    try {
      await Deno.mkdir(`${dir}/manifests`);
      await Deno.writeTextFile(
        `${dir}/config.yaml`,
        standaloneConfig(dir, cri.endpoint, `/kts-userns-${id}`),
      );
      const ours = () =>
        spawnKubelet([
          "--config",
          `${dir}/config.yaml`,
          `--root-dir=${dir}/root`,
          `--hostname-override=${node}`,
        ]);
      const upstream = () => spawnUpstream(dir, node, cri.endpoint, id);
      const runningIn = async (name: string) => {
        const { containers } = await runtime.listContainers({});
        const c = containers.find((c) =>
          c.state === ContainerState.CONTAINER_RUNNING &&
          c.labels["io.kubernetes.pod.name"] === `${name}-${node}`
        );
        return c && { id: c.id, uid: c.labels["io.kubernetes.pod.uid"] ?? "" };
      };
      const uidMap = async (container: string) => {
        const out = await runtime.execSync({
          containerId: container,
          cmd: ["cat", "/proc/self/uid_map"],
          timeout: 10n,
        });
        return new TextDecoder().decode(out.stdout).trim().split(/\s+/).map(
          Number,
        );
      };
      const mappings = (uid: string) =>
        Deno.readTextFile(`${dir}/root/pods/${uid}/userns`);
      const start = async (
        name: string,
        k: { log: { text: string } },
      ) =>
        await waitFor(`${name} running`, () => runningIn(name), 120_000)
          .catch((e) => {
            throw new Error(`${e.message}\n${k.log.text.slice(-3000)}`);
          });

      // the upstream kubelet starts pod "a" and records its range
      await Deno.writeTextFile(
        `${dir}/manifests/a.json`,
        JSON.stringify(pod("a", false)),
      );
      kubelet = upstream();
      const a = await start("a", kubelet);
      const aFile = await mappings(a.uid);
      const aRange = parseMappingsFile(aFile);
      assert.deepEqual(await uidMap(a.id), [0, aRange.hostId, 65536]);
      await kubelet.stop();

      // main.ts reads upstream's file: "a" keeps its container and range; "b" gets another
      kubelet = ours();
      await Deno.writeTextFile(
        `${dir}/manifests/b.json`,
        JSON.stringify(pod("b", false)),
      );
      const b = await start("b", kubelet);
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal((await runningIn("a"))?.id, a.id, "a kept its container");
      assert.equal(await mappings(a.uid), aFile);
      const bFile = await mappings(b.uid);
      const bRange = parseMappingsFile(bFile);
      assert.notEqual(bRange.hostId, aRange.hostId);
      assert.deepEqual(await uidMap(b.id), [0, bRange.hostId, 65536]);
      await kubelet.stop();

      // and back: the upstream kubelet reads main.ts's file for "b" and keeps both pods
      kubelet = upstream();
      const k = kubelet;
      await waitFor(
        "the upstream kubelet syncing b",
        () => k.log.text.includes(`b-${node}`) ? true : undefined,
        60_000,
      );
      await new Promise((r) => setTimeout(r, 5_000));
      assert.equal((await runningIn("b"))?.id, b.id, "b kept its container");
      assert.equal((await runningIn("a"))?.id, a.id, "a kept its container");
      assert.equal(await mappings(b.uid), bFile);
      assert.doesNotMatch(kubelet.log.text, /user namespace/i);
    } finally {
      await kubelet?.stop();
      // the upstream kubelet leaves its pods: take them down with the runtime
      await runtime.close();
      await cri[Symbol.asyncDispose]();
      await removeCgroupTree(`/kts-userns-${id}`);
      await removeTree(dir);
    }
  },
});
