import * as assert from "node:assert/strict";
import { subPathBindExecutor } from "./volume_subpath_exec.ts";
import { serveCgroupAgent } from "./agent.ts";
import { cgroupAgentClient } from "./client.ts";
import { parseMountInfo } from "./volume_tmpfs.ts";
import {
  checkSubPathSource,
  checkSubPathTarget,
  isInside,
} from "./volume_subpath.ts";

const mountCount = async (path: string) =>
  parseMountInfo(await Deno.readTextFile("/proc/self/mountinfo")).filter((
    e,
  ) => e.mountPoint === path).length;
const uid = "8a3c3f5e-1111-4222-8333-944455556666";

Deno.test("checkSubPathTarget() and checkSubPathSource() refuse what names another place", () => {
  const ok = { uid, volume: "data", container: "app", index: 2 };
  assert.equal(checkSubPathTarget(ok), undefined);
  for (
    const bad of [
      { uid: ".." },
      { uid: "a/../../etc" },
      { volume: "../x" },
      { volume: "A" },
      { container: "c/d" },
      { container: "" },
      { index: -1 },
      { index: 1.5 },
      { index: "0" as unknown as number },
    ]
  ) {
    assert.notEqual(
      checkSubPathTarget({ ...ok, ...bad }),
      undefined,
      JSON.stringify(bad),
    );
  }
  assert.equal(
    checkSubPathSource({ volumePath: "/v", path: "/v/a" }),
    undefined,
  );
  assert.notEqual(
    checkSubPathSource({ volumePath: "v", path: "/v/a" }),
    undefined,
  );
  assert.notEqual(
    checkSubPathSource({ volumePath: "/v", path: "a" }),
    undefined,
  );
  assert.notEqual(
    checkSubPathSource({ volumePath: "/v", path: "/v/\0" }),
    undefined,
  );
});

Deno.test("isInside() is the volume's real path or below it, never a sibling with its prefix", () => {
  assert.equal(isInside("/v", "/v"), true);
  assert.equal(isInside("/v/a/b", "/v"), true);
  assert.equal(isInside("/vx", "/v"), false);
  assert.equal(isInside("/etc", "/v"), false);
  assert.equal(isInside("/etc", "/"), true);
});

Deno.test({
  name:
    "subPath binds pin what lies inside the volume and refuse symlink and .. escapes, even swapped in late",
  ignore: Deno.uid() !== 0,
  async fn() {
    const rootDir = await Deno.makeTempDir({ dir: "/var/tmp" });
    const vol = `${rootDir}/pods/${uid}/volumes/kubernetes.io~empty-dir/data`;
    const binds = subPathBindExecutor(rootDir);
    const target = (index: number) => ({
      uid,
      volume: "data",
      container: "app",
      index,
    });
    const pins = `${rootDir}/pods/${uid}/volume-subpaths/data/app`;
    try {
      await Deno.mkdir(`${vol}/dir`, { recursive: true });
      await Deno.writeTextFile(`${vol}/dir/inside`, "in");
      await Deno.writeTextFile(`${vol}/file`, "f");
      await Deno.symlink("/etc", `${vol}/escape`);
      await Deno.symlink("dir", `${vol}/near`);

      // a directory and a file, pinned
      const dirPin = await binds.bindSubPath(target(0), {
        volumePath: vol,
        path: `${vol}/dir`,
      });
      assert.equal(dirPin, `${pins}/0`);
      assert.equal(await Deno.readTextFile(`${dirPin}/inside`), "in");
      const filePin = await binds.bindSubPath(target(1), {
        volumePath: vol,
        path: `${vol}/file`,
      });
      assert.equal(await Deno.readTextFile(filePin), "f");
      // a symlink that stays inside the volume is fine (upstream allows it)
      const nearPin = await binds.bindSubPath(target(2), {
        volumePath: vol,
        path: `${vol}/near`,
      });
      assert.equal(await Deno.readTextFile(`${nearPin}/inside`), "in");
      // a restart finds its pin and adds no second mount
      await binds.bindSubPath(target(0), {
        volumePath: vol,
        path: `${vol}/dir`,
      });
      assert.equal(await mountCount(dirPin), 1);

      // the pin holds what was opened: a symlink put in place later changes nothing
      await Deno.rename(`${vol}/dir`, `${vol}/moved`);
      await Deno.symlink("/etc", `${vol}/dir`);
      assert.equal(await Deno.readTextFile(`${dirPin}/inside`), "in");

      // escapes: a symlink to /etc, one swapped in after the kubelet resolved the path, `..`
      for (
        const [index, path] of [
          [3, `${vol}/escape`],
          [4, `${vol}/dir`],
          [5, `${vol}/${"../".repeat(20)}etc`],
          [6, `${vol}/moved/../../data2`],
        ] as const
      ) {
        if (index === 6) await Deno.mkdir(`${vol}/../data2`);
        await assert.rejects(
          binds.bindSubPath(target(index), { volumePath: vol, path }),
          /refused subPath bind: .* outside volume path/,
          path,
        );
        assert.equal(await mountCount(`${pins}/${index}`), 0, path);
        await assert.rejects(Deno.lstat(`${pins}/${index}`), path);
      }

      // a target path through a symlink is refused before anything is opened
      const other = `${rootDir}/pods/${uid}/volume-subpaths/other`;
      await Deno.symlink("/tmp", other);
      await assert.rejects(
        binds.bindSubPath({ ...target(0), volume: "other" }, {
          volumePath: vol,
          path: `${vol}/file`,
        }),
        /is a symbolic link/,
      );
      await Deno.remove(other);

      // cleaning unmounts every pin and removes the tree, leaving the volume's files
      await binds.cleanSubPaths(uid);
      assert.equal(await mountCount(dirPin), 0);
      assert.equal(await mountCount(filePin), 0);
      await assert.rejects(
        Deno.lstat(`${rootDir}/pods/${uid}/volume-subpaths`),
      );
      assert.equal(await Deno.readTextFile(`${vol}/moved/inside`), "in");
      assert.equal(await Deno.readTextFile(`${vol}/file`), "f");
      await binds.cleanSubPaths(uid); // nothing left: fine
    } finally {
      await binds.cleanSubPaths(uid).catch(() => {});
      // whatever a failing run left mounted goes before the tree (never remove through a pin)
      for (
        const e of parseMountInfo(
          await Deno.readTextFile("/proc/self/mountinfo"),
        )
          .reverse()
      ) {
        if (e.mountPoint.startsWith(`${rootDir}/`)) {
          await new Deno.Command("umount", { args: [e.mountPoint] }).output();
        }
      }
      await Deno.remove(rootDir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the agent pins a subPath for the kubelet and refuses a symlink out of the volume or a target outside its root",
  ignore: Deno.uid() !== 0,
  async fn() {
    const rootDir = await Deno.makeTempDir({ dir: "/var/tmp" });
    const socket = `${rootDir}/cgroup-agent.sock`;
    const agent = await serveCgroupAgent({ socket, cgroupRoot: "/h9" });
    const client = cgroupAgentClient(socket);
    const vol = `${rootDir}/pods/${uid}/volumes/kubernetes.io~empty-dir/data`;
    const target = { uid, volume: "data", container: "app", index: 0 };
    try {
      await Deno.mkdir(`${vol}/dir`, { recursive: true });
      await Deno.symlink("/etc", `${vol}/escape`);
      const pin = await client.bindSubPath(target, {
        volumePath: vol,
        path: `${vol}/dir`,
      });
      assert.equal(
        pin,
        `${await Deno.realPath(
          rootDir,
        )}/pods/${uid}/volume-subpaths/data/app/0`,
      );
      assert.equal(await mountCount(pin), 1);
      await assert.rejects(
        client.bindSubPath({ ...target, index: 1 }, {
          volumePath: vol,
          path: `${vol}/escape`,
        }),
        /outside volume path/,
      );
      await assert.rejects(
        client.bindSubPath({ ...target, uid: "../../etc" }, {
          volumePath: vol,
          path: `${vol}/dir`,
        }),
        /is not a UID/,
      );
      await client.cleanSubPaths(uid);
      assert.equal(await mountCount(pin), 0);
    } finally {
      client.close();
      await agent.close();
      for (
        const e of parseMountInfo(
          await Deno.readTextFile("/proc/self/mountinfo"),
        )
          .reverse()
      ) {
        if (e.mountPoint.startsWith(`${rootDir}/`)) {
          await new Deno.Command("umount", { args: [e.mountPoint] }).output();
        }
      }
      await Deno.remove(rootDir, { recursive: true });
    }
  },
});
