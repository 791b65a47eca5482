/**
 * Volumes end to end on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh);
 * skipped without it: a shared emptyDir, hostPath DirectoryOrCreate, a read-only mount, the
 * downwardAPI files, and the subPath escape suite (absolute and relative symlinks, `..`, and a
 * symlink swapped in a loop by a running container) against a canary directory outside every
 * volume. The swap phase lasts at least 10 s and until `KUBELET_TS_SUBPATH_SWAPS` swaps (default
 * 1,000) were made, at most 120 s.
 */
import assert from "node:assert/strict";
import type { Pod } from "../../src/api/mod.ts";
import { CaptureLogger } from "../../src/log/testing.ts";
import { createVolumeManager } from "../../src/volume/mod.ts";
import {
  endpoint,
  running,
  shContainer,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

const SWAPS = Number(Deno.env.get("KUBELET_TS_SUBPATH_SWAPS") ?? "1000");

const container = shContainer;

/** The file's text; undefined while it is missing or still empty (being written). */
async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path) || undefined;
  } catch {
    return undefined;
  }
}

/** Every file under `dir` with its content (the canary's state). */
async function snapshot(dir: string): Promise<string> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const info = await Deno.lstat(`${dir}/${e.name}`);
    out.push(
      `${e.name} ${info.size} ${info.mtime?.getTime()} ${
        info.isFile ? await Deno.readTextFile(`${dir}/${e.name}`) : ""
      }`,
    );
  }
  return out.sort().join("\n");
}

Deno.test({
  name:
    "containerd: emptyDir shared by two containers, hostPath DirectoryOrCreate, readOnly, downwardAPI files",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({ rootDir: true });
    const hostDir = `${e.rootDir}/../host-made/deep`;
    await e.write("vols.yaml", {
      metadata: { name: "vols", labels: { app: "web", tier: "x" } },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [
          { name: "shared", emptyDir: {} },
          {
            name: "host",
            hostPath: { path: hostDir, type: "DirectoryOrCreate" },
          },
          {
            name: "info",
            downwardAPI: {
              items: [
                { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
                { path: "sub/name", fieldRef: { fieldPath: "metadata.name" } },
              ],
            },
          },
        ],
        containers: [
          container(
            "writer",
            "echo hi > /shared/hello; echo made > /host/made; " +
              "(echo x > /ro/nope && echo wrote || echo refused) > /shared/ro-result; " +
              "cat /info/labels > /shared/labels; sleep 3600",
            {
              volumeMounts: [
                { name: "shared", mountPath: "/shared" },
                { name: "shared", mountPath: "/ro", readOnly: true },
                { name: "host", mountPath: "/host" },
                { name: "info", mountPath: "/info" },
              ],
            },
          ),
          container(
            "reader",
            "until [ -f /data/hello ]; do sleep 0.2; done; cat /data/hello > /data/reader-saw; sleep 3600",
            { volumeMounts: [{ name: "shared", mountPath: "/data" }] },
          ),
        ],
      },
    });
    await waitFor("both containers running", async () => {
      const cs = running(await e.containers("vols"));
      return cs.length === 2 ? cs : undefined;
    });
    const uid = (await e.containers("vols"))[0]!.uid;
    const vols = `${e.rootDir}/pods/${uid}/volumes`;
    const shared = `${vols}/kubernetes.io~empty-dir/shared`;
    assert.equal(
      await waitFor(
        "the reader's copy",
        () => readOrUndefined(`${shared}/reader-saw`),
      ),
      "hi\n",
    );
    assert.equal(
      await waitFor(
        "the read-only attempt",
        () => readOrUndefined(`${shared}/ro-result`),
      ),
      "refused\n",
    );
    assert.equal(await Deno.readTextFile(`${hostDir}/made`), "made\n");
    assert.equal((await Deno.stat(hostDir)).mode! & 0o777, 0o755);
    const labels = await waitFor(
      "labels",
      () => readOrUndefined(`${shared}/labels`),
    );
    assert.equal(labels, 'app="web"\ntier="x"');
    const info = `${vols}/kubernetes.io~downward-api/info`;
    assert.match(await Deno.readLink(`${info}/..data`), /^\.\.\d{4}_/);
    assert.equal(await Deno.readLink(`${info}/labels`), "..data/labels");
    assert.equal(await Deno.readTextFile(`${info}/sub/name`), `vols-${e.node}`);

    // the pod goes: its volume directories go with it
    await e.remove("vols.yaml");
    await waitFor("volume directories removed", async () => {
      try {
        await Deno.stat(vols);
        return undefined;
      } catch {
        return true;
      }
    });
  },
});

Deno.test({
  name:
    "containerd: subPath escapes (absolute and relative symlinks, .., a symlink swapped in a loop) never reach the canary",
  ignore: !endpoint,
  async fn() {
    await using e = await startE2e({ rootDir: true });
    const canary = await Deno.makeTempDir({ prefix: "kts-h4-canary-" });
    await Deno.writeTextFile(`${canary}/secret`, "canary\n");
    const before = await snapshot(canary);
    // each escaping container would copy the secret out and write into the canary dir
    const probe =
      "cat /mnt/secret > /out/leak-$NAME 2>/dev/null; echo pwned > /mnt/pwned-$NAME; sleep 3600";
    const victim = (name: string, subPath: string) =>
      container(name, probe, {
        env: [{ name: "NAME", value: name }],
        volumeMounts: [
          // read-only, so no victim counts as a writer of "vol" for the others
          { name: "vol", mountPath: "/mnt", subPath, readOnly: true },
          { name: "out", mountPath: "/out" },
        ],
      });
    await e.write("escape.yaml", {
      metadata: { name: "escape" },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: "vol", emptyDir: {} }, { name: "out", emptyDir: {} }],
        initContainers: [
          container(
            "planter",
            `ln -s ${canary} /vol/abs; ln -s ../../../../../../../../../../../..${canary} /vol/rel; ` +
              "mkdir -p /vol/ok/inner; ln -s ok /vol/inside",
            { volumeMounts: [{ name: "vol", mountPath: "/vol" }] },
          ),
        ],
        containers: [
          victim("abs", "abs"),
          victim("rel", "rel"),
          victim("dots", "ok/../../x"),
          victim("inside", "inside/inner"),
          {
            ...victim("expr", ""),
            volumeMounts: [
              {
                name: "vol",
                mountPath: "/mnt",
                subPathExpr: "$(DIR)",
                readOnly: true,
              },
              { name: "out", mountPath: "/out" },
            ],
            env: [{ name: "NAME", value: "expr" }, {
              name: "DIR",
              value: "abs",
            }],
          },
        ],
      },
    });
    const reasons = await waitFor("the escapes refused", () => {
      const cs = e.statuses("escape").at(-1)?.containerStatuses ?? [];
      const waiting = cs.filter((c) =>
        c.state.waiting?.reason === "CreateContainerConfigError"
      );
      return waiting.length === 4 &&
          cs.some((c) => c.name === "inside" && c.state.running)
        ? waiting
        : undefined;
    });
    assert.deepEqual(
      reasons.map((r) => r.name).sort(),
      ["abs", "dots", "expr", "rel"],
    );
    for (const r of reasons) {
      assert.match(
        r.state.waiting?.message ?? "",
        /failed to prepare subPath for volumeMount|must not contain '\.\.'/,
        r.name,
      );
    }

    const escapeUid = (await e.containers("escape"))[0]!.uid;
    const out =
      `${e.rootDir}/pods/${escapeUid}/volumes/kubernetes.io~empty-dir/out`;
    await waitFor(
      "the in-volume container ran",
      () => Deno.stat(`${out}/leak-inside`).then(() => true, () => undefined),
    );
    for await (const f of Deno.readDir(out)) {
      assert.equal(await Deno.readTextFile(`${out}/${f.name}`), "", f.name);
    }

    // a running container swaps a component between a directory and symlinks out
    await e.write("swap.yaml", {
      metadata: { name: "swap" },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: "vol", emptyDir: {} }, { name: "out", emptyDir: {} }],
        containers: [
          container(
            "swapper",
            `n=0; while true; do rm -rf /vol/x; mkdir /vol/x; rm -rf /vol/x; ln -s ${canary} /vol/x; ` +
              `rm -f /vol/x; ln -s ../../../../../../../../..${canary} /vol/x; n=$((n+1)); echo $n > /vol/count; done`,
            { volumeMounts: [{ name: "vol", mountPath: "/vol" }] },
          ),
          victim("victim", "x"),
        ],
      },
    });
    const started = Date.now();
    // the swapper rewrites its counter all the time: keep the highest reading
    let swaps = 0;
    const countFile = async () =>
      swaps = Math.max(
        swaps,
        Number(
          await readOrUndefined(
            `${e.rootDir}/pods/${
              (await e.containers("swap"))[0]?.uid
            }/volumes/kubernetes.io~empty-dir/vol/count`,
          ) ?? 0,
        ),
      );
    let refusals = 0;
    while (
      Date.now() - started < 10_000 ||
      (await countFile() < SWAPS && Date.now() - started < 120_000)
    ) {
      const cs = e.statuses("swap").at(-1)?.containerStatuses ?? [];
      const v = cs.find((c) => c.name === "victim");
      assert.ok(
        !v?.state.running,
        "the victim must not run while the swapper does",
      );
      if (v?.state.waiting?.reason === "CreateContainerConfigError") refusals++;
      await new Promise((r) => setTimeout(r, 500));
    }
    await countFile();
    const seconds = Math.round((Date.now() - started) / 1000);
    // deno-lint-ignore no-console
    console.log(
      `swap loop: ${swaps} swaps in ${seconds}s, victim never started (${refusals} status samples waiting)`,
    );
    assert.ok(swaps >= SWAPS, `only ${swaps} swaps`);
    assert.ok(refusals > 0);
    const message = (e.statuses("swap").at(-1)?.containerStatuses ?? [])
      .find((c) => c.name === "victim")?.state.waiting?.message ?? "";
    assert.match(message, /container "swapper" can write that volume/);
    assert.equal(await snapshot(canary), before, "canary dir unchanged");
    await Deno.remove(canary, { recursive: true });
  },
});

Deno.test({
  name:
    "containerd: downwardAPI files change atomically under a reading container; a Memory emptyDir is on tmpfs",
  ignore: !endpoint,
  async fn() {
    const memoryDir = `/dev/shm/kts-h4-${crypto.randomUUID().slice(0, 8)}`;
    await using e = await startE2e({
      rootDir: true,
      memoryVolumeDir: memoryDir,
    });
    const volumes = [
      {
        name: "info",
        downwardAPI: {
          items: [
            { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
            { path: "gen", fieldRef: { fieldPath: "metadata.labels['gen']" } },
          ],
        },
      },
      { name: "mem", emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
    ];
    // upstream's promise: a reader that enters ..data once sees one generation of every
    // file (labels says gen="N", gen says N); a mixed, empty or partial pair is recorded as
    // bad. A generation removed under the reader (ENOENT) is read again, as upstream expects.
    const reader =
      'while true; do r=$(cd /info/..data && l=$(cat labels) && g=$(cat gen) && echo "$l|$g") || continue; ' +
      'g=${r#*|}; [ "$r" = "gen=\\"$g\\"|$g" ] || echo "$r" >> /mem/bad; ' +
      '[ "$g" != "$last" ] && echo "$g" >> /mem/seen; last=$g; done';
    await e.write("atomic.yaml", {
      metadata: { name: "atomic", labels: { gen: "0" } },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes,
        containers: [container("reader", reader, {
          volumeMounts: [
            { name: "info", mountPath: "/info" },
            { name: "mem", mountPath: "/mem" },
          ],
        })],
      },
    });
    await waitFor("the reader running", async () => {
      const cs = running(await e.containers("atomic"));
      return cs.length === 1 ? cs : undefined;
    });
    const uid = (await e.containers("atomic"))[0]!.uid;
    const mem = `${memoryDir}/${uid}/mem`;
    await waitFor("the first read", () => readOrUndefined(`${mem}/seen`));
    // an API pod's label updates, written into the same volume as the kubelet does
    const writer = createVolumeManager({ logger: new CaptureLogger() }, {
      rootDir: e.rootDir!,
      memoryDir,
      writerLayout: "symlinks",
    });
    // at least 200 updates, and more (up to 2,000) until the reader, which a loaded machine
    // may schedule rarely, has seen a dozen generations
    const generationsSeen = async () =>
      (await readOrUndefined(`${mem}/seen`) ?? "").trim().split("\n").length;
    let updates = 0;
    for (
      let gen = 1;
      gen <= 200 || (gen <= 2_000 && await generationsSeen() <= 11);
      gen++
    ) {
      updates = gen;
      const pod = {
        metadata: {
          name: `atomic-${e.node}`,
          namespace: "default",
          uid,
          labels: { gen: String(gen) },
        },
        spec: { containers: [], volumes },
      } as unknown as Pod;
      assert.deepEqual(await writer.setUpPod(pod), { ok: true });
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, 500));
    const seen = (await Deno.readTextFile(`${mem}/seen`)).trim().split("\n");
    // deno-lint-ignore no-console
    console.log(
      `downwardAPI: ${updates} updates, the reader saw ${seen.length} generations, none mixed`,
    );
    assert.equal(await readOrUndefined(`${mem}/bad`), undefined);
    assert.ok(seen.length > 10, `only ${seen.length} generations seen`);
    assert.ok(
      seen.every((g) => /^\d+$/.test(g) && Number(g) <= updates),
      seen.join(","),
    );
    // the Memory volume sits in the tmpfs directory and goes with the pod
    assert.ok((await Deno.stat(`${mem}/seen`)).isFile);
    await e.remove("atomic.yaml");
    await waitFor("the Memory volume removed", async () => {
      try {
        await Deno.stat(`${memoryDir}/${uid}`);
        return undefined;
      } catch {
        return true;
      }
    });
    await Deno.remove(memoryDir, { recursive: true });
  },
});
