/**
 * Volumes end to end on a real containerd (`KUBELET_TS_CRI_ENDPOINT`, see scripts/cri_env.sh);
 * skipped without it: a shared emptyDir, hostPath DirectoryOrCreate, a read-only mount, the
 * downwardAPI files, and the subPath escape suite (absolute and relative symlinks, `..`, and a
 * symlink swapped in a loop by a running container) against a canary directory outside every
 * volume. `KUBELET_TS_SUBPATH_SWAP_SECONDS` lengthens the swap phase (default 15 s).
 */
import assert from "node:assert/strict";
import {
  endpoint,
  IMAGE,
  running,
  startE2e,
  waitFor,
} from "./_containerd_e2e.ts";

const SWAP_SECONDS = Number(
  Deno.env.get("KUBELET_TS_SUBPATH_SWAP_SECONDS") ?? "15",
);

function container(name: string, script: string, extra: object = {}) {
  return {
    name,
    image: IMAGE,
    imagePullPolicy: "IfNotPresent",
    command: ["sh", "-c", script],
    ...extra,
  };
}

async function readOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
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
        /not within volume path|must not contain '\.\.'/,
        r.name,
      );
    }

    const escapeUid = (await e.containers("escape"))[0]!.uid;
    const out =
      `${e.rootDir}/pods/${escapeUid}/volumes/kubernetes.io~empty-dir/out`;
    await waitFor(
      "the in-volume container ran",
      () => readOrUndefined(`${out}/leak-inside`),
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
    const deadline = Date.now() + SWAP_SECONDS * 1000;
    let refusals = 0;
    while (Date.now() < deadline) {
      const cs = e.statuses("swap").at(-1)?.containerStatuses ?? [];
      const v = cs.find((c) => c.name === "victim");
      assert.ok(
        !v?.state.running,
        "the victim must not run while the swapper does",
      );
      if (v?.state.waiting?.reason === "CreateContainerConfigError") refusals++;
      await new Promise((r) => setTimeout(r, 500));
    }
    const uid = (await e.containers("swap"))[0]!.uid;
    const swaps = await readOrUndefined(
      `${e.rootDir}/pods/${uid}/volumes/kubernetes.io~empty-dir/vol/count`,
    );
    // deno-lint-ignore no-console
    console.log(
      `swap loop: ${swaps?.trim()} swaps in ${SWAP_SECONDS}s, victim refused (${refusals} status samples)`,
    );
    assert.ok(Number(swaps) > 0);
    assert.ok(refusals > 0);
    const message = (e.statuses("swap").at(-1)?.containerStatuses ?? [])
      .find((c) => c.name === "victim")?.state.waiting?.message ?? "";
    assert.match(message, /container "swapper" can write that volume/);
    assert.equal(await snapshot(canary), before, "canary dir unchanged");
    await Deno.remove(canary, { recursive: true });
  },
});
